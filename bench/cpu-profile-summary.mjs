#!/usr/bin/env node
// Summarizes a V8 .cpuprofile (e.g. from `BENCH_SERVER_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/errata-prof"`):
// top functions by self time, by total (inclusive) time, and self time per package.
//
//   node bench/cpu-profile-summary.mjs /tmp/errata-prof/CPU.*.cpuprofile [top=25]
import { readFileSync } from 'node:fs';
import { frameKey, packageOf } from './profile-frames.mjs';

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/cpu-profile-summary.mjs <file.cpuprofile> [top]');
  process.exit(2);
}
const TOP = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8'));

const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
// Sample i lasted timeDeltas[i + 1] (V8 records the delta *before* each sample); close enough either way.
const self = new Map();
const total = new Map();
const byPackage = new Map();
let sampled = 0;
const { samples, timeDeltas } = profile;
for (let i = 0; i < samples.length; i++) {
  const dt = (timeDeltas[i + 1] ?? timeDeltas[i] ?? 0) / 1000; // ms
  sampled += dt;
  const leaf = nodes.get(samples[i]);
  self.set(frameKey(leaf.callFrame), (self.get(frameKey(leaf.callFrame)) ?? 0) + dt);
  const pkg = packageOf(leaf.callFrame);
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + dt);
  const seen = new Set();
  for (let id = samples[i]; id !== undefined; id = parent.get(id)) {
    const k = frameKey(nodes.get(id).callFrame);
    if (seen.has(k)) continue;
    seen.add(k);
    total.set(k, (total.get(k) ?? 0) + dt);
  }
}

const idle = self.get('(idle)  ') ?? 0;
const busy = sampled - idle;
const pct = (ms) => `${((100 * ms) / busy).toFixed(1).padStart(5)}%`;
const table = (title, map, n, skip = () => false) => {
  console.log(`\n${title}`);
  [...map]
    .filter(([k]) => !skip(k))
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .forEach(([k, ms]) => console.log(`${pct(ms)} ${(ms / 1000).toFixed(2).padStart(7)} s  ${k}`));
};

console.log(
  `${file}: ${(sampled / 1000).toFixed(1)} s sampled, ${(idle / 1000).toFixed(1)} s idle, ${(busy / 1000).toFixed(1)} s busy (percentages are of busy time)`,
);
table(`Top ${TOP} by self time`, self, TOP, (k) => k.startsWith('(idle)'));
table('Self time by package / area', byPackage, 20, (k) => k === '(idle)');
table(
  `Top ${TOP} by total (inclusive) time`,
  total,
  TOP,
  (k) => k.startsWith('(root)') || k.startsWith('(idle)') || k.startsWith('(program)'),
);
