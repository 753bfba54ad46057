import { resolve } from 'node:path';

/** Every setting Errata reads, with its environment variable. README.md's configuration table mirrors this. */
export interface AppConfig {
  readonly port: number;
  readonly host: string;
  /** `text`: lines for people (coloured on a terminal); `json`: one JSON object per line, for log collectors. */
  readonly logFormat: 'text' | 'json';
  /** Set → that PostgreSQL server via `pg`; unset → embedded PGlite in `dataDir`. */
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  readonly ingestKey: string | null;
  readonly readKey: string | null;
  readonly maxBodyBytes: number;
  /** How long an OTLP request's body may take to arrive: its place among the concurrent ingests is held meanwhile. */
  readonly bodyTimeoutMs: number;
  readonly maxAttributeBytes: number;
  readonly maxConcurrentIngests: number;
  /**
   * Bytes of request bodies (inflated) being decoded and stored at once: decoded spans take about 12× their body,
   * and 16 requests of 64 MiB would need far more than the heap. Past it, another request is answered 503 +
   * Retry-After; a request alone is always taken.
   */
  readonly maxDecodingBytes: number;
  readonly poolSize: number;
  /**
   * How long a statement of the server's waits at most for PostgreSQL's answer (0: no bound). The network path can
   * stall without closing (a partition, a failover, a firewall dropping packets): without a bound, a request or the
   * projector would wait on it for ever instead of answering 503 and trying again.
   */
  readonly queryTimeoutMs: number;
  /**
   * Report and read requests (REST reports, findings, servers, traces; the MCP endpoint's read tools) answered at
   * once; more wait in a short queue (`QUEUED_READS_PER_PLACE` per place), and past it are refused with 503 +
   * Retry-After (over MCP, the tool error `ERRATA_BUSY`). Below the pool size, so that ingest, the projector, webhooks
   * and fix rounds always find a connection.
   */
  readonly maxConcurrentReads: number;
  readonly textLimitBytes: number;
  readonly retryWindowMs: number;
  /** Traces hinted retries may add to one projection (a chain of retries across traces); beyond, read-only context. */
  readonly maxLinkedTraces: number;
  readonly projectionPollMs: number;
  /** How long a background projector batch waits at most for a moment without OTLP requests in flight. */
  readonly projectionYieldMs: number;
  /** Let webhooks reach loopback, private and link-local addresses (and plain http). Off: SSRF guard. */
  readonly webhookAllowInternal: boolean;
  readonly webhookTimeoutMs: number;
  /** Attempts before a delivery is dead-lettered. */
  readonly webhookMaxAttempts: number;
  /** First retry delay; each later one four times longer (capped at a day), with ±50 % jitter. */
  readonly webhookRetryBaseMs: number;
  readonly deliveryPollMs: number;
  /** How often findings are turned into fixes, and fixes checked against later traffic. */
  readonly fixIntervalMs: number;
  /** Calls a new server version needs, without an offence, before a fix counts as verified. */
  readonly fixMinCalls: number;
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
  'ERRATA_BODY_TIMEOUT_MS',
  'ERRATA_MAX_ATTRIBUTE_BYTES',
  'ERRATA_MAX_CONCURRENT_INGESTS',
  'ERRATA_MAX_DECODING_BYTES',
  'ERRATA_PG_POOL_SIZE',
  'ERRATA_PG_QUERY_TIMEOUT_MS',
  'ERRATA_MAX_CONCURRENT_READS',
  'ERRATA_TEXT_LIMIT_BYTES',
  'ERRATA_RETRY_WINDOW_MS',
  'ERRATA_MAX_LINKED_TRACES',
  'ERRATA_PROJECTION_POLL_MS',
  'ERRATA_PROJECTION_YIELD_MS',
  'ERRATA_WEBHOOK_ALLOW_INTERNAL',
  'ERRATA_WEBHOOK_TIMEOUT_MS',
  'ERRATA_WEBHOOK_MAX_ATTEMPTS',
  'ERRATA_WEBHOOK_RETRY_BASE_MS',
  'ERRATA_DELIVERY_POLL_MS',
  'ERRATA_FIX_INTERVAL_MS',
  'ERRATA_FIX_MIN_CALLS',
  'ERRATA_LOG_FORMAT',
] as const;

type ConfigVariable = (typeof CONFIG_VARIABLES)[number];
type Env = Partial<Record<ConfigVariable, string>> & NodeJS.ProcessEnv;

export class ConfigError extends Error {}

/** The shortest key ERRATA_INGEST_KEY / ERRATA_READ_KEY accept (the keys Errata makes itself are 40+ characters). */
export const MIN_ENV_KEY_LENGTH = 16;
/** Longer than any key Errata makes (about 45 characters) or an operator would set: refused, never looked up. */
export const MAX_API_KEY_LENGTH = 1_024;

/**
 * The longest delay a Node timer takes (2³¹ − 1 ms, about 24.8 days): a longer one fires after 1 ms instead, so an
 * interval set to a month would run its work continuously. Durations that become timers are refused past it.
 */
export const MAX_TIMER_MS = 2_147_483_647;

export function loadConfig(env: Env = process.env, cwd = process.cwd()): AppConfig {
  const poolSize = integer(env, 'ERRATA_PG_POOL_SIZE', 10, 2);
  return {
    port: integer(env, 'PORT', 4318, 0, 65535),
    host: text(env, 'HOST') ?? '0.0.0.0',
    logFormat: logFormat(env),
    databaseUrl: databaseUrl(env),
    dataDir: resolve(cwd, text(env, 'ERRATA_DATA_DIR') ?? '.errata'),
    ingestKey: apiKey(env, 'ERRATA_INGEST_KEY'),
    readKey: apiKey(env, 'ERRATA_READ_KEY'),
    maxBodyBytes: integer(env, 'ERRATA_MAX_BODY_BYTES', 64 * 1024 * 1024, 1024),
    bodyTimeoutMs: integer(env, 'ERRATA_BODY_TIMEOUT_MS', 30_000, 100, MAX_TIMER_MS),
    maxAttributeBytes: integer(env, 'ERRATA_MAX_ATTRIBUTE_BYTES', 1024 * 1024, 1024),
    maxConcurrentIngests: integer(env, 'ERRATA_MAX_CONCURRENT_INGESTS', 16, 1),
    maxDecodingBytes: integer(env, 'ERRATA_MAX_DECODING_BYTES', 128 * 1024 * 1024, 1024),
    poolSize,
    queryTimeoutMs: statementBound(env),
    // Half the pool by default: reads queue for connections with everything else, and a burst of heavy reports
    // held every one of them (the projector, webhooks and fix rounds timed out waiting).
    maxConcurrentReads: integer(
      env,
      'ERRATA_MAX_CONCURRENT_READS',
      Math.max(1, Math.floor(poolSize / 2)),
      1,
      poolSize - 1,
    ),
    textLimitBytes: integer(env, 'ERRATA_TEXT_LIMIT_BYTES', 2048, 64),
    retryWindowMs: integer(env, 'ERRATA_RETRY_WINDOW_MS', 10 * 60 * 1000, 1),
    maxLinkedTraces: integer(env, 'ERRATA_MAX_LINKED_TRACES', 2000, 0),
    projectionPollMs: integer(env, 'ERRATA_PROJECTION_POLL_MS', 500, 10, MAX_TIMER_MS),
    projectionYieldMs: integer(env, 'ERRATA_PROJECTION_YIELD_MS', 5_000, 0, 600_000),
    webhookAllowInternal: boolean(env, 'ERRATA_WEBHOOK_ALLOW_INTERNAL', false),
    webhookTimeoutMs: integer(env, 'ERRATA_WEBHOOK_TIMEOUT_MS', 15_000, 100, MAX_TIMER_MS),
    webhookMaxAttempts: integer(env, 'ERRATA_WEBHOOK_MAX_ATTEMPTS', 10, 1),
    webhookRetryBaseMs: integer(env, 'ERRATA_WEBHOOK_RETRY_BASE_MS', 5_000, 1, MAX_TIMER_MS),
    deliveryPollMs: integer(env, 'ERRATA_DELIVERY_POLL_MS', 1_000, 10, MAX_TIMER_MS),
    fixIntervalMs: integer(env, 'ERRATA_FIX_INTERVAL_MS', 60_000, 10, MAX_TIMER_MS),
    fixMinCalls: integer(env, 'ERRATA_FIX_MIN_CALLS', 20, 1),
  };
}

/** A PostgreSQL URL; anything else would be read as a host name, and fail later with a puzzling message. */
function databaseUrl(env: Env): string | null {
  const url = text(env, 'DATABASE_URL');
  if (url === null) return null;
  if (url.startsWith('/')) return url; // pg's socket form: "/var/run/postgresql dbname"
  const protocol = URL.canParse(url) ? new URL(url).protocol : null;
  if (protocol !== 'postgres:' && protocol !== 'postgresql:' && protocol !== 'socket:') {
    throw new ConfigError(
      `DATABASE_URL must be a PostgreSQL URL such as postgres://user:password@localhost:5432/errata (or a socket directory and database, "/var/run/postgresql errata"), got ${describeDatabaseUrl(url)}`,
    );
  }
  return url;
}

function logFormat(env: Env): AppConfig['logFormat'] {
  const format = text(env, 'ERRATA_LOG_FORMAT')?.toLowerCase() ?? 'text';
  if (format !== 'text' && format !== 'json') {
    throw new ConfigError(`ERRATA_LOG_FORMAT must be text or json, got "${format}"`);
  }
  return format;
}

function boolean(env: Env, name: ConfigVariable, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase() ?? null;
  if (raw === null) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function text(env: Env, name: ConfigVariable): string | null {
  const value = env[name]?.trim();
  return value ? value : null;
}

/** A key the operator chose: a short one is guessed quickly, so it stops the start instead of being stored. */
function apiKey(env: Env, name: ConfigVariable): string | null {
  const key = text(env, name);
  if (key !== null && key.length < MIN_ENV_KEY_LENGTH) {
    throw new ConfigError(
      `${name} must be at least ${MIN_ENV_KEY_LENGTH} characters long, got ${key.length}; generate one with: openssl rand -hex 24`,
    );
  }
  if (key !== null && key.length > MAX_API_KEY_LENGTH)
    throw new ConfigError(`${name} must be at most ${MAX_API_KEY_LENGTH} characters long, got ${key.length}`);
  return key;
}

/**
 * Below a second, PostgreSQL cancels ordinary statements (startup's own, a report's) and Errata cannot start, with
 * an error that does not name the setting: refused here instead. `0` is no bound.
 */
const MIN_STATEMENT_BOUND_MS = 1_000;

function statementBound(env: Env): number {
  const bound = integer(env, 'ERRATA_PG_QUERY_TIMEOUT_MS', 30_000, 0, MAX_TIMER_MS);
  if (bound !== 0 && bound < MIN_STATEMENT_BOUND_MS) {
    throw new ConfigError(
      `ERRATA_PG_QUERY_TIMEOUT_MS must be 0 (no bound) or at least ${MIN_STATEMENT_BOUND_MS} ms, got "${bound}": ` +
        "shorter, PostgreSQL cancels Errata's ordinary statements",
    );
  }
  return bound;
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

/** Connection parameters pg takes from the query string that hold a secret. */
const SECRET_URL_PARAMETERS = ['password', 'sslpassword'];

/**
 * `postgres://user:secret@host/db` → `postgres://user:***@host/db`, for logs; a password given as a query parameter
 * (`?password=…`, which pg takes too) likewise.
 */
export function describeDatabaseUrl(url: string): string {
  if (url.startsWith('/')) return url; // the socket form holds no password
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    for (const name of [...parsed.searchParams.keys()])
      if (SECRET_URL_PARAMETERS.includes(name.toLowerCase())) parsed.searchParams.set(name, '***');
    return parsed.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}
