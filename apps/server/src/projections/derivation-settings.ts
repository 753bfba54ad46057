import type { AppConfig } from '../config/app-config';

/**
 * The settings that shape what the read models hold: the same log derived with others gives other reports (a retry
 * window decides what is a retry). Recorded with the read models' checkpoint.
 */
export interface DerivationSettings {
  /** ERRATA_RETRY_WINDOW_MS */
  readonly retryWindowMs: number;
  /** ERRATA_MAX_LINKED_TRACES */
  readonly maxLinkedTraces: number;
}

const VARIABLES = {
  retryWindowMs: 'ERRATA_RETRY_WINDOW_MS',
  maxLinkedTraces: 'ERRATA_MAX_LINKED_TRACES',
} as const satisfies Record<keyof DerivationSettings, string>;

export const derivationOf = (config: DerivationSettings): DerivationSettings => ({
  retryWindowMs: config.retryWindowMs,
  maxLinkedTraces: config.maxLinkedTraces,
});

/** The settings that differ, as `ERRATA_RETRY_WINDOW_MS 600000 → 1000`; empty when none does. */
export function derivationChanges(from: DerivationSettings, to: DerivationSettings): string[] {
  return (Object.keys(VARIABLES) as (keyof DerivationSettings)[])
    .filter((key) => from[key] !== to[key])
    .map((key) => `${VARIABLES[key]} ${from[key]} → ${to[key]}`);
}

/** A recorded value read back; null when none was recorded (or it is not of this shape). */
export function recordedDerivation(value: unknown): DerivationSettings | null {
  if (typeof value !== 'object' || value === null) return null;
  const { retryWindowMs, maxLinkedTraces } = value as Record<string, unknown>;
  return typeof retryWindowMs === 'number' && typeof maxLinkedTraces === 'number'
    ? { retryWindowMs, maxLinkedTraces }
    : null;
}

/**
 * The configuration a CLI command derives with: the settings the read models were derived with (the server's), not
 * those of the CLI's own environment, which a cron job sets only DATABASE_URL in. A variable set here to something
 * else is said, and not used: the server's setting is the one to change.
 */
export function adoptRecordedDerivation(
  config: AppConfig,
  recorded: DerivationSettings | null,
  env: NodeJS.ProcessEnv,
  note: (line: string) => void,
): AppConfig {
  if (recorded === null) return config;
  for (const key of Object.keys(VARIABLES) as (keyof DerivationSettings)[]) {
    if (env[VARIABLES[key]] !== undefined && config[key] !== recorded[key])
      note(
        `${VARIABLES[key]}=${config[key]} is not used: the read models were derived with ${recorded[key]} (the ` +
          "server's setting), and this command derives with it too",
      );
  }
  return { ...config, ...recorded };
}
