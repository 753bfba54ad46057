#!/usr/bin/env node
// Errata SDK overhead benchmark: CPU time an instrumentation adds to each MCP `callTool`, against an in-process
// McpServer over InMemoryTransport — uninstrumented vs @errata/sdk vs @traceloop/instrumentation-mcp, same
// invocation, interleaved. See BENCHMARKS.md.
//
//   npm run bench:sdk                         (builds first; or: node bench/sdk.bench.mjs after a build)
//
// Environment (all optional):
//   BENCH_SDK_CALLS=20000          timed calls per run
//   BENCH_SDK_WARMUP=5000          untimed calls per run before the timed ones (JIT)
//   BENCH_SDK_ROUNDS=7             rounds; each runs every variant once, in its own child process
//   BENCH_SDK_ERROR_PERCENT=15     tool calls answered with isError (seed 000's transient error payload)
//   BENCH_SDK_ALLOC_CALLS=2000     calls after the timed ones under the sampling heap profiler (allocated
//                                  bytes per call; 0 = skip)
//   BENCH_SDK_VARIANTS=…           comma-separated subset of none,otel-only,bare-span,errata,errata-manual,
//                                  traceloop
//                                  (none is always run: the others are measured against it); also the ablations
//                                  errata-without-{result-analysis,args-hash,connection,trace-context,retry-memory,
//                                  all-five}: errata with that piece of its per-call work replaced by a constant,
//                                  to see what each costs (not run unless named)
//   BENCH_SDK_PROFILE_DIR=<dir>    each child writes a V8 CPU profile of its timed calls there, and a heap profile
//                                  of its allocation calls (summarize with: node bench/cpu-profile-summary.mjs <file>;
//                                  compare two: node bench/sdk/profile-diff.mjs <before> <after>)
//   BENCH_SDK_NODE_OPTIONS=""      extra node flags for the children
//   BENCH_SDK_JSON=<path>          also write the results as JSON
//
// The pieces live in bench/sdk/: settings (this environment), workload (server, tools, calls), tracing (the
// shared OpenTelemetry setup and the counting exporter), variants (what each one installs), child (one measured
// run), runner (spawning children) and report (what is printed). Exit code 1 means the benchmark itself failed
// (a child crashed or timed out, or the span check failed), not that a target was missed.
import { mkdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { headerLine, report, runLine } from './sdk/report.mjs';
import { liveChildren, runChild } from './sdk/runner.mjs';
import { PROFILE_DIR, ROUNDS, VARIANTS } from './sdk/settings.mjs';
import { fmt } from './shared/format.mjs';
import { onInterrupt } from './shared/interrupt.mjs';

onInterrupt("stopping the benchmark's child processes", () => {
  for (const child of liveChildren) child.kill('SIGKILL');
});

async function main() {
  const cpuCount = cpus().length;
  console.log(headerLine(cpuCount));
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  const started = performance.now();
  const runs = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const baseline = await runChild('none', round);
    runs.push(baseline);
    console.log(runLine(baseline, null, cpuCount));
    for (const variant of VARIANTS.filter((name) => name !== 'none')) {
      const run = await runChild(variant, round);
      runs.push(run);
      console.log(runLine(run, baseline, cpuCount));
    }
  }
  console.log(`(${fmt((performance.now() - started) / 1000, 1)} s)`);
  report(runs, cpuCount);
}

let ok = false;
try {
  await main();
  ok = true;
} catch (error) {
  console.error(`\nBENCHMARK FAILED: ${error instanceof Error ? error.message : String(error)}`);
}
for (const child of liveChildren) child.kill('SIGKILL');
process.exit(ok ? 0 : 1);
