// Compares builds of @errata/sdk in one process, where child processes differ more from each other than the
// builds do (bench/sdk.bench.mjs's runs vary by ±20 µs on a shared machine):
//
//   taskset -c 1 node bench/sdk/compare-builds.mjs <sdk dist/index.js> [<another dist/index.js> …]
//
// Each build wraps its own client (instrumentMcpClient) of the benchmark's workload, next to one uninstrumented
// client; all share one OpenTelemetry setup (bench/sdk/tracing.mjs). The clients take turns, COMPARE_ROUNDS times
// COMPARE_CALLS calls each, the order reversed every other round; a build's added CPU per call is the median over
// the rounds of its CPU per call minus the uninstrumented client's in the same round. Builds of other commits come
// from `bash bench/sdk/worktree-build.sh <commit> /tmp/wt` (a worktree whose SDK runs with its own @errata/domain).
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { intEnv } from '../shared/env.mjs';
import { median } from '../shared/median.mjs';
import { YIELD_EVERY } from './settings.mjs';
import { setUpTracing } from './tracing.mjs';
import { callParams, connectPair } from './workload.mjs';

const require = createRequire(import.meta.url);
const builds = process.argv.slice(2).map((path) => resolve(path));
if (builds.length === 0) {
  console.error('usage: node bench/sdk/compare-builds.mjs <sdk dist/index.js> [<another dist/index.js> …]');
  process.exit(2);
}
const ROUNDS = intEnv('COMPARE_ROUNDS', 15, 1, 1_000);
const CALLS = intEnv('COMPARE_CALLS', 2_000, 100, 1_000_000);
const WARMUP_CALLS = 3_000;

const tracing = setUpTracing(() => true);
const plain = await connectPair({ onClientClass: () => 'uninstrumented' });
const clients = [{ label: 'uninstrumented', client: plain.client }];
for (const build of builds) {
  const { instrumentMcpClient } = require(build);
  const pair = await connectPair({ onClientClass: () => build, instrumentClient: instrumentMcpClient });
  clients.push({ label: build, client: pair.client });
}

let next = 0;
async function callTools(client, count) {
  for (let i = 0; i < count; i++) {
    await client.callTool(callParams(next++));
    if ((i + 1) % YIELD_EVERY === 0) await yieldToLoop();
  }
}

for (const { client } of clients) await callTools(client, WARMUP_CALLS);
const cpuPerCall = new Map(clients.map(({ label }) => [label, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const { label, client } of round % 2 === 0 ? clients : [...clients].reverse()) {
    const before = process.cpuUsage();
    await callTools(client, CALLS);
    const { user, system } = process.cpuUsage(before);
    cpuPerCall.get(label).push((user + system) / CALLS);
  }
}

const baseline = cpuPerCall.get('uninstrumented');
console.log(`${ROUNDS} rounds × ${CALLS} calls per client; CPU µs per call, median over the rounds`);
for (const [label, values] of cpuPerCall) {
  const added = values.map((value, round) => value - baseline[round]);
  const addedText = label === 'uninstrumented' ? '' : `  added ${median(added).toFixed(1)}`;
  console.log(`${median(values).toFixed(1).padStart(8)}${addedText}  ${label}`);
}
await tracing.provider.shutdown();
for (const { client } of clients) await client.close();
