// The reports benchmark's knobs, parsed once at import so a bad value fails before any database is created.
import { randomBytes } from 'node:crypto';
import { intEnv } from '../shared/env.mjs';

export const EVENTS = intEnv('BENCH_REPORTS_EVENTS', 5_000_000, 1_000, 100_000_000);
export const DAYS = intEnv('BENCH_REPORTS_DAYS', 30, 2, 365);
export const REQUESTS = intEnv('BENCH_REPORTS_REQUESTS', 40, 5, 10_000);
export const WARMUP = intEnv('BENCH_REPORTS_WARMUP', 3, 0, 100);
export const BASELINE_RUNS = intEnv('BENCH_REPORTS_BASELINE_RUNS', 5, 1, 1_000);
export const SPANS_PER_REQUEST = intEnv('BENCH_REPORTS_SPANS_PER_REQUEST', 512, 1, 10_000);
export const LOAD_CONCURRENCY = intEnv('BENCH_REPORTS_CONCURRENCY', 4, 1, 64);
export const LAG_SECONDS = intEnv('BENCH_LAG_SECONDS', 60, 5, 3_600);
export const LAG_RATE = intEnv('BENCH_LAG_RATE', 5_000, 10, 1_000_000);
/** Keep (and reuse, when already loaded) this database instead of a fresh one dropped at the end. */
export const KEEP_DATABASE = process.env.BENCH_REPORTS_DATABASE?.trim() || null;
export const JSON_OUT = process.env.BENCH_JSON?.trim() || null;
export const READ_KEY = `bench-read-${randomBytes(16).toString('hex')}`;
export const PROJECTION_TIMEOUT_MS = 4 * 3_600_000;
