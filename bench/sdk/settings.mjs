// Everything the environment decides for the SDK overhead benchmark, parsed once at import so a bad value fails
// before any child process starts. The parent and every child read the same variables.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { intEnv } from '../shared/env.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CHILD_ENTRY = join(ROOT, 'bench/sdk/child.mjs');
export const ERRATA_SDK_ENTRY = join(ROOT, 'libs/sdk/dist/index.js');

/** Every variant, in the order each round runs them; `none` is always run, first (the others are compared to it). */
export const ALL_VARIANTS = ['none', 'otel-only', 'bare-span', 'errata', 'errata-manual', 'traceloop'];
/**
 * What each piece of Errata's per-call work costs: `errata` with that piece replaced by a constant (variants.mjs).
 * Run only when named in BENCH_SDK_VARIANTS; their spans lack what the piece records.
 */
export const ABLATION_VARIANTS = [
  'errata-without-result-analysis',
  'errata-without-args-hash',
  'errata-without-connection',
  'errata-without-trace-context',
  'errata-without-retry-memory',
  'errata-without-all-five',
];
const KNOWN_VARIANTS = [...ALL_VARIANTS, ...ABLATION_VARIANTS];

function variantsEnv() {
  const raw = process.env.BENCH_SDK_VARIANTS?.trim();
  if (!raw) return ALL_VARIANTS;
  const wanted = raw.split(',').map((name) => name.trim());
  const unknown = wanted.filter((name) => !KNOWN_VARIANTS.includes(name));
  if (unknown.length > 0 || wanted.length === 0) {
    throw new Error(`BENCH_SDK_VARIANTS: unknown ${unknown.join(', ')}; known: ${KNOWN_VARIANTS.join(', ')}`);
  }
  return KNOWN_VARIANTS.filter((name) => name === 'none' || wanted.includes(name));
}

export const CALLS = intEnv('BENCH_SDK_CALLS', 20_000, 100, 10_000_000);
export const WARMUP_CALLS = intEnv('BENCH_SDK_WARMUP', 5_000, 0, 10_000_000);
export const ROUNDS = intEnv('BENCH_SDK_ROUNDS', 7, 1, 1_000);
export const ERROR_PERCENT = intEnv('BENCH_SDK_ERROR_PERCENT', 15, 0, 100);
/**
 * Calls made after the timed ones, under V8's sampling heap profiler, to estimate the bytes each call allocates
 * (0 = skip). Unlike CPU time, this figure hardly moves between runs on a noisy machine.
 */
export const ALLOC_CALLS = intEnv('BENCH_SDK_ALLOC_CALLS', 2_000, 0, 1_000_000);
export const VARIANTS = variantsEnv();
export const CHILD_NODE_OPTIONS = (process.env.BENCH_SDK_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
export const JSON_OUT = process.env.BENCH_SDK_JSON?.trim() || null;
/** Each child writes a V8 CPU profile of its timed calls only (inspector, 200 µs sampling) into this directory. */
export const PROFILE_DIR = process.env.BENCH_SDK_PROFILE_DIR?.trim() || null;

/** Yield to the event loop (setImmediate) after this many calls, as an agent waiting on a model would. */
export const YIELD_EVERY = 256;

/**
 * A child gets 30 s for startup and teardown plus 2 ms per call (about 8× the slowest variant's CPU per call on
 * the 2-core bench machine); then it is killed and the invocation fails.
 */
export const CHILD_TIMEOUT_MS = 30_000 + 2 * (CALLS + WARMUP_CALLS + ALLOC_CALLS);
/** How long a child may take to flush its spans at the end. */
export const FLUSH_TIMEOUT_MS = 10_000;
/** Marks the one stdout line a child reports its result on. */
export const RESULT_MARKER = '@@bench-sdk-result ';

/** The installed version (the packages are hoisted to the root; some export no ./package.json). */
const versionOf = (name) => {
  try {
    return JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return '?';
  }
};

/** Versions in the header line: what was measured. */
export const VERSIONS = {
  node: process.version,
  mcpSdk: versionOf('@modelcontextprotocol/sdk'),
  errataSdk: JSON.parse(readFileSync(join(ROOT, 'libs/sdk/package.json'), 'utf8')).version,
  traceloop: versionOf('@traceloop/instrumentation-mcp'),
  otelApi: versionOf('@opentelemetry/api'),
  otelSdkTraceBase: versionOf('@opentelemetry/sdk-trace-base'),
  otelContextAsyncHooks: versionOf('@opentelemetry/context-async-hooks'),
  zod: versionOf('zod'),
};

/**
 * Which build of @errata/sdk and @errata/domain was measured (their sources change often): a hash of the .js files
 * in libs/sdk/dist and libs/domain/dist, and when the newest of them was written.
 */
export function errataBuild() {
  const hash = createHash('sha256');
  let newest = 0;
  for (const dir of ['libs/sdk/dist', 'libs/domain/dist']) {
    for (const file of readdirSync(join(ROOT, dir))
      .filter((f) => f.endsWith('.js'))
      .sort()) {
      const path = join(ROOT, dir, file);
      hash.update(file).update(readFileSync(path));
      newest = Math.max(newest, statSync(path).mtimeMs);
    }
  }
  return {
    hash: hash.digest('hex').slice(0, 12),
    builtAt: new Date(newest).toISOString().slice(0, 19) + 'Z',
  };
}
