// The long-trace benchmark's knobs, parsed once at import so a bad value fails before any database is created.
import { intEnv } from '../shared/env.mjs';

function sizes(raw) {
  const values = raw.split(',').map((v) => Number(v.trim()));
  if (values.some((v) => !Number.isInteger(v) || v < 10 || v > 1_000_000) || values.length === 0)
    throw new Error(
      `BENCH_LONG_TRACE_CALLS must be integers from 10 to 1000000, comma-separated, got "${raw}"`,
    );
  return values.sort((a, b) => a - b);
}

export const CALLS = sizes(process.env.BENCH_LONG_TRACE_CALLS?.trim() || '1000,5000,20000');
export const RUNS = intEnv('BENCH_LONG_TRACE_RUNS', 3, 1, 100);
export const BATCH_SPANS = intEnv('BENCH_LONG_TRACE_BATCH_SPANS', 25, 1, 10_000);
export const PROBES = intEnv('BENCH_LONG_TRACE_PROBES', 5, 1, 1_000);
export const STREAM = intEnv('BENCH_LONG_TRACE_STREAM', 20, 1, 10_000);
export const PAGES = intEnv('BENCH_LONG_TRACE_PAGES', 10, 1, 1_000);
/** Spans per request while a trace grows to the next size, untimed. */
export const GROW_SPANS = 500;
export const DATABASE_PREFIX = process.env.BENCH_LONG_TRACE_DATABASE_PREFIX?.trim() || 'errata_bench_';
export const JSON_OUT = process.env.BENCH_JSON?.trim() || null;
export const PROJECTION_TIMEOUT_MS = 30 * 60_000;
