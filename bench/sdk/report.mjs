// What the SDK overhead benchmark prints (and optionally writes as JSON): the header, one line per run, then the
// summary table and the targets. Kept apart from the measuring code so the format BENCHMARKS.md quotes lives here.
import { writeFileSync } from 'node:fs';
import {
  ALLOC_CALLS,
  CALLS,
  CHILD_NODE_OPTIONS,
  ERROR_PERCENT,
  JSON_OUT,
  PROFILE_DIR,
  ROUNDS,
  VARIANTS,
  VERSIONS,
  WARMUP_CALLS,
  errataBuild,
} from './settings.mjs';
import { VARIANTS as DEFINITIONS } from './variants.mjs';
import { fmt } from '../shared/format.mjs';
import { median } from '../shared/median.mjs';

export const TARGET_ADDED_US = 25;
/** A run during which other processes used more than this share of the machine's CPU is marked as noisy. */
export const NOISY_SHARE = 0.25;

const signed = (n, digits) => `${n < 0 ? '−' : '+'}${fmt(Math.abs(n), digits)}`;

const cpuPerCall = (run) => run.cpuUs / run.calls;
const kilobytes = (bytes) => bytes / 1024;
const wallPerCall = (run) => (run.wallMs * 1000) / run.calls;
const width = Math.max(...VARIANTS.map((name) => name.length));

const BUILD = errataBuild();

export function headerLine(cpuCount) {
  const v = VERSIONS;
  return (
    `Errata SDK overhead benchmark — node ${v.node}, @modelcontextprotocol/sdk ${v.mcpSdk}, @errata/sdk ${v.errataSdk} ` +
    `(libs/sdk + libs/domain dist ${BUILD.hash}, built ${BUILD.builtAt}), @traceloop/instrumentation-mcp ${v.traceloop}, @opentelemetry/api ${v.otelApi}, ` +
    `sdk-trace-base ${v.otelSdkTraceBase}, context-async-hooks ${v.otelContextAsyncHooks}, zod ${v.zod}, ${cpuCount} CPUs\n` +
    `  ${fmt(CALLS)} timed callTool calls (+${fmt(WARMUP_CALLS)} warm-up) per run, ${ERROR_PERCENT}% tool errors, ` +
    `sequential awaits over InMemoryTransport; ${ROUNDS} rounds × ${VARIANTS.length} variants (${VARIANTS.join(', ')}), ` +
    `one child process per run, interleaved round by round` +
    (CHILD_NODE_OPTIONS.length ? `; child node flags: ${CHILD_NODE_OPTIONS.join(' ')}` : '') +
    (ALLOC_CALLS
      ? `; then ${fmt(ALLOC_CALLS)} calls under the sampling heap profiler (allocated bytes)`
      : '') +
    (PROFILE_DIR ? `; CPU profiles of the timed calls → ${PROFILE_DIR}` : '')
  );
}

function attributesPerSpan(spans) {
  if (spans === null) return null;
  const count = spans.ok.spans + spans.error.spans;
  if (count === 0) return null;
  return {
    all: (spans.ok.attributes + spans.error.attributes) / count,
    ok: spans.ok.spans ? spans.ok.attributes / spans.ok.spans : NaN,
    error: spans.error.spans ? spans.error.attributes / spans.error.spans : NaN,
    bytes: (spans.ok.valueBytes + spans.error.valueBytes) / count,
  };
}

/** Share of the machine's CPU capacity other processes used during the run's timed calls (null off Linux). */
export const otherShare = (run, cpuCount) =>
  run.otherProcessesCpuMs === null ? null : run.otherProcessesCpuMs / (run.wallMs * cpuCount);

export function runLine(run, baseline, cpuCount) {
  const share = otherShare(run, cpuCount);
  const attributes = attributesPerSpan(run.spans);
  const spans = run.spans === null ? 0 : run.spans.ok.spans + run.spans.error.spans;
  return (
    `round ${run.round}/${ROUNDS} ${run.variant.padEnd(width)}  CPU ${fmt(cpuPerCall(run), 1).padStart(6)} µs/call` +
    (baseline ? ` (${signed(cpuPerCall(run) - cpuPerCall(baseline), 1)})` : '') +
    (run.mainThreadCpuMs === null
      ? ''
      : `, main thread ${fmt((1000 * run.mainThreadCpuMs) / run.calls, 1)}`) +
    ` · wall ${fmt(wallPerCall(run), 1)} µs/call · ` +
    (attributes
      ? `${fmt(spans)} tools/call spans (${fmt(run.spans.error.spans)} ERROR) ✓, ${fmt(attributes.all, 1)} attributes/span · `
      : '') +
    (run.allocatedBytesPerCall === null
      ? ''
      : `allocated ${fmt(kilobytes(run.allocatedBytesPerCall), 1)} KB/call · `) +
    `other processes ${fmt((run.otherProcessesCpuMs ?? NaN) / 1000, 2)} CPU-s` +
    (share !== null && share > NOISY_SHARE ? ` (${fmt(100 * share)}% of the machine: noisy)` : '') +
    (run.profile ? ` · profile ${run.profile}` : '')
  );
}

/** Per variant: CPU and wall per call, added CPU per call against the same round's uninstrumented run. */
export function summarize(runs, cpuCount) {
  const byVariant = new Map(VARIANTS.map((name) => [name, runs.filter((run) => run.variant === name)]));
  const baseline = byVariant.get('none');
  const baselineOf = (round) => baseline.find((run) => run.round === round);
  const figures = new Map();
  for (const [name, list] of byVariant) {
    const cpu = list.map(cpuPerCall);
    const added = list.map((run) => cpuPerCall(run) - cpuPerCall(baselineOf(run.round)));
    const quiet = (run) => (otherShare(run, cpuCount) ?? 0) <= NOISY_SHARE;
    const quietAdded = list
      .filter((run) => quiet(run) && quiet(baselineOf(run.round)))
      .map((run) => cpuPerCall(run) - cpuPerCall(baselineOf(run.round)));
    const attributes = list.map((run) => attributesPerSpan(run.spans)).filter((a) => a !== null);
    const allocated = list.map((run) => run.allocatedBytesPerCall).filter((b) => b !== null);
    const allocatedAdded = list
      .filter((run) => run.allocatedBytesPerCall !== null)
      .map((run) => run.allocatedBytesPerCall - baselineOf(run.round).allocatedBytesPerCall);
    figures.set(name, {
      name,
      label: DEFINITIONS[name].label,
      instrumentedVia: [...new Set(list.map((run) => run.instrumentedVia))].join(' / '),
      cpuMedian: median(cpu),
      cpuMin: Math.min(...cpu),
      cpuMax: Math.max(...cpu),
      wallMedian: median(list.map(wallPerCall)),
      addedMedian: median(added),
      addedMin: Math.min(...added),
      addedMax: Math.max(...added),
      addedOfMedians: median(cpu) - median(baseline.map(cpuPerCall)),
      quietAddedMedian: median(quietAdded),
      quietRounds: quietAdded.length,
      noisyRuns: list.filter((run) => (otherShare(run, cpuCount) ?? 0) > NOISY_SHARE).length,
      maxRssMb: Math.max(...list.map((run) => run.maxRssMb)),
      allocatedMedian: median(allocated),
      allocatedAddedMedian: median(allocatedAdded),
      attributes: attributes.length ? attributes[0] : null,
      attributeKeys: list[0]?.spans?.attributeKeys ?? [],
      samples: list[0]?.spans?.samples ?? null,
    });
  }
  return figures;
}

function table(figures) {
  const header = [
    'variant',
    'CPU µs/call median (min–max)',
    'added µs/call median (min–max)',
    'added, quiet rounds (n)',
    'wall µs/call',
    'attributes/span ok / error',
    'attr. bytes/span',
    'allocated KB/call (added)',
  ];
  const rows = [...figures.values()].map((f) => [
    f.name,
    `${fmt(f.cpuMedian, 1)} (${fmt(f.cpuMin, 1)}–${fmt(f.cpuMax, 1)})`,
    f.name === 'none' ? '—' : `${fmt(f.addedMedian, 1)} (${fmt(f.addedMin, 1)}–${fmt(f.addedMax, 1)})`,
    f.name === 'none'
      ? '—'
      : f.quietAddedMedian === null
        ? '— (0)'
        : `${fmt(f.quietAddedMedian, 1)} (${f.quietRounds})`,
    fmt(f.wallMedian, 1),
    f.attributes ? `${fmt(f.attributes.ok, 1)} / ${fmt(f.attributes.error, 1)}` : '—',
    f.attributes ? fmt(f.attributes.bytes) : '—',
    f.allocatedMedian === null
      ? '—'
      : `${fmt(kilobytes(f.allocatedMedian), 1)}` +
        (f.name === 'none' ? '' : ` (${signed(kilobytes(f.allocatedAddedMedian), 1)})`),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  return [line(header), ...rows.map(line)];
}

/**
 * What each instrumentation adds above `bare-span`, the floor of recording a call as a span at all: the cost of
 * what it reads from the call and records. Null when the floor was not run.
 */
function aboveFloor(figures) {
  const floor = figures.get('bare-span');
  if (!floor) return null;
  const above = [...figures.values()]
    .filter((f) => f.name !== 'none' && f.name !== 'otel-only' && f.name !== 'bare-span')
    .map((f) => `${f.name} ${signed(f.addedMedian - floor.addedMedian, 1)}`);
  return (
    `floor       bare-span (one span per call, nothing read from it) adds ${fmt(floor.addedMedian, 1)} µs; ` +
    `above it, µs/call: ${above.join(', ')}`
  );
}

/** The two targets of issue #3, for the module-patching instrumentation (and the manual one, for information). */
export function targets(figures) {
  const traceloop = figures.get('traceloop');
  const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
  const out = [];
  for (const name of ['errata', 'errata-manual']) {
    const errata = figures.get(name);
    if (!errata) continue;
    const parts = [
      `${name}: added ${fmt(errata.addedMedian, 1)} µs ≤ ${TARGET_ADDED_US} µs: ${verdict(errata.addedMedian <= TARGET_ADDED_US)}`,
    ];
    if (traceloop) {
      const ratio = errata.addedMedian / traceloop.addedMedian;
      const more =
        errata.attributes && traceloop.attributes ? errata.attributes.all > traceloop.attributes.all : null;
      parts.push(
        `below traceloop's ${fmt(traceloop.addedMedian, 1)} µs: ${verdict(errata.addedMedian < traceloop.addedMedian)} ` +
          `(ratio ${fmt(ratio, 2)})`,
        `records more: ${more === null ? '?' : more ? 'yes' : 'no'} (${fmt(errata.attributes?.all ?? NaN, 1)} vs ` +
          `${fmt(traceloop.attributes?.all ?? NaN, 1)} attributes/span)`,
      );
    }
    out.push({ name, text: parts.join(' · ') });
  }
  return out;
}

export function report(runs, cpuCount) {
  const figures = summarize(runs, cpuCount);
  const noisy = [...figures.values()].reduce((sum, f) => sum + f.noisyRuns, 0);
  const traceloop = figures.get('traceloop');
  const errata = figures.get('errata');
  const lines = [
    '',
    '================ Errata SDK overhead summary ================',
    `data        ${fmt(CALLS)} timed calls per run (${ERROR_PERCENT}% isError), ${ROUNDS} rounds; CPU = process.cpuUsage() user+system of the child (all threads) over the timed calls`,
    `added       variant − uninstrumented, per round (same round's "none" run), median over rounds; "quiet rounds": only ` +
      `rounds where neither run was noisy`,
    ...table(figures),
    '',
    ...[...figures.values()]
      .filter((f) => f.name !== 'none')
      .map((f) => `${f.name.padEnd(width)}  ${f.label}; instrumented via ${f.instrumentedVia}`),
    errata && traceloop
      ? `ratio       errata added / traceloop added = ${fmt(errata.addedMedian / traceloop.addedMedian, 2)}` +
        (errata.allocatedAddedMedian !== null && traceloop.allocatedAddedMedian !== null
          ? `; allocated bytes added: ${fmt(errata.allocatedAddedMedian / traceloop.allocatedAddedMedian, 2)}`
          : '')
      : null,
    aboveFloor(figures),
    ...targets(figures).map((t, i) => `${i === 0 ? 'targets     ' : '            '}${t.text}`),
    `noise       ${noisy} of ${runs.length} runs shared the machine (other processes > ${fmt(100 * NOISY_SHARE)}% of its CPU ` +
      `during the timed calls; marked "noisy" above); the medians include them`,
    '==============================================================',
  ].filter((line) => line !== null);
  console.log(lines.join('\n'));

  if (JSON_OUT) {
    writeFileSync(
      JSON_OUT,
      JSON.stringify(
        {
          settings: { CALLS, WARMUP_CALLS, ALLOC_CALLS, ROUNDS, ERROR_PERCENT, VARIANTS, CHILD_NODE_OPTIONS },
          versions: VERSIONS,
          errataBuild: BUILD,
          figures: Object.fromEntries(figures),
          targets: targets(figures),
          runs,
        },
        null,
        2,
      ),
    );
  }
  return figures;
}
