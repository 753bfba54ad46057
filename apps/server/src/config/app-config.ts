import { resolve } from 'node:path';

/** Every setting Errata reads, with its environment variable. README.md's configuration table mirrors this. */
export interface AppConfig {
  readonly port: number;
  readonly host: string;
  /** Set → that PostgreSQL server via `pg`; unset → embedded PGlite in `dataDir`. */
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  readonly ingestKey: string | null;
  readonly readKey: string | null;
  readonly maxBodyBytes: number;
  readonly maxAttributeBytes: number;
  readonly maxConcurrentIngests: number;
  readonly poolSize: number;
  readonly textLimitBytes: number;
  readonly retryWindowMs: number;
  readonly projectionPollMs: number;
}

export const APP_CONFIG = Symbol('AppConfig');

/** The variables `loadConfig` reads; docker-compose and the README are tested against this list. */
export const CONFIG_VARIABLES = [
  'PORT',
  'HOST',
  'DATABASE_URL',
  'ERRATA_DATA_DIR',
  'ERRATA_INGEST_KEY',
  'ERRATA_READ_KEY',
  'ERRATA_MAX_BODY_BYTES',
  'ERRATA_MAX_ATTRIBUTE_BYTES',
  'ERRATA_MAX_CONCURRENT_INGESTS',
  'ERRATA_PG_POOL_SIZE',
  'ERRATA_TEXT_LIMIT_BYTES',
  'ERRATA_RETRY_WINDOW_MS',
  'ERRATA_PROJECTION_POLL_MS',
] as const;

type ConfigVariable = (typeof CONFIG_VARIABLES)[number];
type Env = Partial<Record<ConfigVariable, string>> & NodeJS.ProcessEnv;

export class ConfigError extends Error {}

export function loadConfig(env: Env = process.env, cwd = process.cwd()): AppConfig {
  return {
    port: integer(env, 'PORT', 4318, 0, 65535),
    host: text(env, 'HOST') ?? '0.0.0.0',
    databaseUrl: text(env, 'DATABASE_URL'),
    dataDir: resolve(cwd, text(env, 'ERRATA_DATA_DIR') ?? '.errata'),
    ingestKey: text(env, 'ERRATA_INGEST_KEY'),
    readKey: text(env, 'ERRATA_READ_KEY'),
    maxBodyBytes: integer(env, 'ERRATA_MAX_BODY_BYTES', 64 * 1024 * 1024, 1024),
    maxAttributeBytes: integer(env, 'ERRATA_MAX_ATTRIBUTE_BYTES', 1024 * 1024, 1024),
    maxConcurrentIngests: integer(env, 'ERRATA_MAX_CONCURRENT_INGESTS', 16, 1),
    poolSize: integer(env, 'ERRATA_PG_POOL_SIZE', 10, 2),
    textLimitBytes: integer(env, 'ERRATA_TEXT_LIMIT_BYTES', 2048, 64),
    retryWindowMs: integer(env, 'ERRATA_RETRY_WINDOW_MS', 10 * 60 * 1000, 1),
    projectionPollMs: integer(env, 'ERRATA_PROJECTION_POLL_MS', 500, 10),
  };
}

function text(env: Env, name: ConfigVariable): string | null {
  const value = env[name]?.trim();
  return value ? value : null;
}

function integer(
  env: Env,
  name: ConfigVariable,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
) {
  const raw = text(env, name);
  if (raw === null) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

/** `postgres://user:secret@host/db` → `postgres://user:***@host/db`, for logs. */
export function describeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}
