// Everything the environment decides, parsed once at import so a bad value fails before any database is created.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { intEnv } from '../shared/env.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);
const { loadConfig } = require(join(ROOT, 'apps/server/dist/config/app-config.js'));

export const SERVER_ENTRY = join(ROOT, 'apps/server/dist/main.js');
export const SERVER_EXIT_HOOK = join(ROOT, 'bench/server-exit-hook.cjs');
export const MIGRATIONS_DIR = join(ROOT, 'migrations');

export const BASE_URL =
  process.env.BENCH_DATABASE_URL?.trim() ||
  process.env.DATABASE_URL?.trim() ||
  'postgres://postgres@127.0.0.1:5432/postgres';
export const REQUESTS = intEnv('BENCH_REQUESTS', 200, 1, 100_000);
export const SPANS_PER_REQUEST = intEnv('BENCH_SPANS_PER_REQUEST', 512, 1, 100_000);
export const CONCURRENCY = intEnv('BENCH_CONCURRENCY', 8, 1, 1024);
export const RUNS = intEnv('BENCH_RUNS', 5, 1, 100);
export const COPY_RUNS = intEnv('BENCH_COPY_RUNS', RUNS, 0, 100);
export const WARMUP_REQUESTS = intEnv('BENCH_WARMUP_REQUESTS', 8, 0, 10_000);
export const SERVER_NODE_OPTIONS = (process.env.BENCH_SERVER_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
export const JSON_OUT = process.env.BENCH_JSON?.trim() || null;

export const INGEST_KEY = `bench-ingest-${randomBytes(16).toString('hex')}`;
export const READY_TIMEOUT_MS = 60_000;
export const REQUEST_TIMEOUT_MS = 120_000;
export const STOP_TIMEOUT_MS = 20_000;
export const PROJECTION_TIMEOUT_MS = 120_000;
export const COPY_CHUNK_BYTES = 1 << 20;
export const LOG_TAIL_BYTES = 16_384;

/** The server's own configuration for the environment it will get: same text/attribute limits for the COPY rows. */
export function serverEnv(databaseUrl, port) {
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // flags go through BENCH_SERVER_NODE_OPTIONS, explicitly
  delete env.ERRATA_READ_KEY;
  return {
    ...env,
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    ERRATA_INGEST_KEY: INGEST_KEY,
    NODE_ENV: env.NODE_ENV ?? 'production',
  };
}
export const SERVER_CONFIG = loadConfig(serverEnv('postgres://unused', 0), ROOT);
