#!/usr/bin/env node
// Per-call difference, function by function, between two profiles the SDK benchmark's children wrote with
// BENCH_SDK_PROFILE_DIR: CPU (`.cpuprofile`, self µs per timed call) or allocation (`.heapprofile`, self bytes per
// call under the sampling heap profiler), e.g. uninstrumented against errata. Both files must be of one kind.
//
//   node bench/sdk/profile-diff.mjs <before> <after> [top=40]
//
// Per call means divided by BENCH_SDK_CALLS (CPU) or BENCH_SDK_ALLOC_CALLS (allocation) as set now: run it with
// the settings the benchmark ran with.
import { readFileSync } from 'node:fs';
import { frameKey } from '../profile-frames.mjs';
import { ALLOC_CALLS, CALLS } from './settings.mjs';

const [before, after, topArg, ...extra] = process.argv.slice(2);
const TOP = Number(topArg ?? 40);
if (!before || !after || extra.length > 0 || !Number.isInteger(TOP)) {
  console.error(
    'usage: node bench/sdk/profile-diff.mjs <before.(cpu|heap)profile> <after> [top]\n' +
      'One file on each side: a pattern that matches several rounds passes several (profile with BENCH_SDK_ROUNDS=1).',
  );
  process.exit(2);
}
const kindOf = (file) => (file.endsWith('.heapprofile') ? 'heap' : 'cpu');
if (kindOf(before) !== kindOf(after)) {
  console.error('profile-diff: one .cpuprofile and one .heapprofile cannot be compared');
  process.exit(2);
}
const heap = kindOf(before) === 'heap';

/** Self µs (CPU) or bytes (heap) per function key, for the whole profile. */
function selfByFunction(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const self = new Map();
  const add = (frame, amount) => self.set(frameKey(frame), (self.get(frameKey(frame)) ?? 0) + amount);
  if (heap) {
    const pending = [profile.head];
    while (pending.length > 0) {
      const node = pending.pop();
      add(node.callFrame, node.selfSize);
      pending.push(...node.children);
    }
    return self;
  }
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i++) {
    add(nodes.get(samples[i]).callFrame, timeDeltas[i + 1] ?? timeDeltas[i] ?? 0);
  }
  return self;
}

const calls = heap ? ALLOC_CALLS : CALLS;
const [a, b] = [selfByFunction(before), selfByFunction(after)];
const rows = [...new Set([...a.keys(), ...b.keys()])]
  .map((key) => [key, ((b.get(key) ?? 0) - (a.get(key) ?? 0)) / calls])
  .filter(([key]) => !key.startsWith('(idle)'));
const totalDifference = rows.reduce((sum, [, value]) => sum + value, 0);
const unit = heap ? 'bytes' : 'µs';
const format = (value) => (heap ? value.toFixed(0) : value.toFixed(2)).padStart(9);
console.log(`${after} − ${before}: ${format(totalDifference).trim()} ${unit} per call (${calls} calls)`);
console.log(`Top ${TOP} differences by size, self ${unit} per call`);
rows
  .sort((x, y) => Math.abs(y[1]) - Math.abs(x[1]))
  .slice(0, TOP)
  .forEach(([key, value]) => console.log(`${format(value)}  ${key}`));
