#!/usr/bin/env node
// What the SDK's result analysis (toolResultAttributes) costs on its own, on the results the SDK benchmark's server
// returns: CPU µs per result for a lookup, a search page and the transient error, and for the benchmark's call mix.
// In place, in a traced call, the same work costs more (bench/sdk.bench.mjs's ablation variants): this is the floor.
//
//   npm run build && node bench/sdk/result-analysis.mjs      # BENCH_RESULT_CALLS (200000), BENCH_RESULT_RUNS (5)
import { createRequire } from 'node:module';
import { DEFAULT_TEXT_LIMIT_BYTES } from '@errata/domain';
import { fmt } from '../shared/format.mjs';
import { intEnv } from '../shared/env.mjs';
import { median } from '../shared/median.mjs';
import { ROOT } from './settings.mjs';
import { callParams, lookupResult, searchResult } from './workload.mjs';

const CALLS = intEnv('BENCH_RESULT_CALLS', 200_000, 1_000, 10_000_000);
const RUNS = intEnv('BENCH_RESULT_RUNS', 5, 1, 50);
/** Distinct result objects per shape, so that no one object's hidden class or string stays hot in the caches. */
const POOL = 1_000;

const { toolResultAttributes } = createRequire(`${ROOT}/`)('./libs/sdk/dist/tool-result.js');
const options = { captureResults: false, textLimitBytes: DEFAULT_TEXT_LIMIT_BYTES };

const resultOf = ({ name, arguments: args }) =>
  name === 'lookup_order' ? lookupResult(args.orderId) : searchResult(args);
const pool = (pick) => Array.from({ length: POOL }, (_, i) => pick(i));
const shapes = {
  lookup: pool((i) => lookupResult(`#${10000 + i}`)),
  search: pool((i) => searchResult({ customerId: `cus_${40000 + (i % 977)}`, status: 'paid', limit: 3 })),
  error: pool((i) => lookupResult(`#9${String(i).padStart(4, '0')}`)),
  'bench mix': pool((i) => resultOf(callParams(i))),
};

/** CPU µs per result over CALLS results of the pool, after a warm-up of a quarter as many. */
function run(results) {
  const analyse = (i) => toolResultAttributes(results[i % POOL], 'lookup_order', options);
  for (let i = 0; i < CALLS / 4; i++) analyse(i);
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) analyse(i);
  const { user, system } = process.cpuUsage(before);
  return (user + system) / CALLS;
}

console.log(`toolResultAttributes alone: ${fmt(CALLS)} results per run, ${RUNS} runs per shape, interleaved`);
const perShape = Object.fromEntries(Object.keys(shapes).map((shape) => [shape, []]));
for (let round = 0; round < RUNS; round++) {
  for (const [shape, results] of Object.entries(shapes)) perShape[shape].push(run(results));
}
for (const [shape, runs] of Object.entries(perShape)) {
  const sorted = [...runs].sort((a, b) => a - b);
  console.log(
    `${shape.padEnd(10)} ${fmt(median(runs), 2)} µs/result (${fmt(sorted[0], 2)}–${fmt(sorted.at(-1), 2)})`,
  );
}
