// One measured run of one variant, in its own process (both instrumentations patch Client.prototype, so every
// run starts from fresh module state):
//
//   node bench/sdk/child.mjs <variant> [round]
//
// Sets up the variant's tracing and instrumentation, loads the MCP SDK, connects client and server, makes the
// warm-up calls, then the timed calls (sequential awaits), flushes the spans and checks that there is exactly one
// tools/call span per timed call. Prints one RESULT_MARKER line with the result as JSON; exits 1 on any problem.
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import {
  ALLOC_CALLS,
  CALLS,
  CHILD_TIMEOUT_MS,
  FLUSH_TIMEOUT_MS,
  PROFILE_DIR,
  RESULT_MARKER,
  WARMUP_CALLS,
  YIELD_EVERY,
} from './settings.mjs';
import { setUpTracing } from './tracing.mjs';
import { VARIANTS } from './variants.mjs';
import { callParams, connectPair, isErrorCall } from './workload.mjs';

const [name, round = '0'] = process.argv.slice(2);

// The parent kills a child that overruns; this is the child's own, in case the parent is gone.
setTimeout(() => {
  console.error(`child ${name}: no result within ${CHILD_TIMEOUT_MS} ms`);
  process.exit(1);
}, CHILD_TIMEOUT_MS).unref();

/** Busy and total jiffies of the whole machine (first line of /proc/stat), or null off Linux. */
function machineJiffies() {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = fields[3] + (fields[4] ?? 0);
    const total = fields.slice(0, 8).reduce((sum, n) => sum + n, 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

/** CPU ms (user + system) of this process's main thread so far, from /proc (10 ms ticks), or null off Linux. */
function mainThreadCpuMs() {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // USER_HZ = 100
  } catch {
    return null;
  }
}

/** Calls `count` tools starting at plan index `from`; checks each result's isError against the plan. */
async function callTools(client, from, count) {
  let errors = 0;
  let mismatches = 0;
  for (let i = from; i < from + count; i++) {
    const result = await client.callTool(callParams(i));
    const failed = result.isError === true;
    if (failed) errors++;
    if (failed !== isErrorCall(i)) mismatches++;
    if ((i + 1) % YIELD_EVERY === 0) await yieldToLoop();
  }
  if (mismatches > 0) throw new Error(`${mismatches} of ${count} calls did not succeed/fail as planned`);
  return errors;
}

async function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function startProfile() {
  if (PROFILE_DIR === null) return null;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return session;
}

async function stopProfile(session) {
  if (session === null) return null;
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  const file = join(PROFILE_DIR, `sdk-${name}-round${round}-${process.pid}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));
  return file;
}

/** V8 samples about one allocation per this many bytes and scales each sample up to estimate all bytes allocated. */
const ALLOC_SAMPLING_INTERVAL = 256;

/**
 * Bytes allocated per call, estimated by V8's sampling heap profiler over `count` calls from plan index `from`,
 * counting objects that garbage collection has freed again (most of a call's allocations are short-lived).
 */
async function allocatedBytesPerCall(client, from, count) {
  if (count === 0) return null;
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: ALLOC_SAMPLING_INTERVAL,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await callTools(client, from, count);
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  if (PROFILE_DIR !== null) {
    writeFileSync(
      join(PROFILE_DIR, `sdk-${name}-round${round}-${process.pid}.heapprofile`),
      JSON.stringify(profile),
    );
  }
  let bytes = 0;
  const pending = [profile.head];
  while (pending.length > 0) {
    const node = pending.pop();
    bytes += node.selfSize;
    pending.push(...node.children);
  }
  return bytes / count;
}

/** Exactly one tools/call span per timed call, ERROR exactly for the tool errors; none without instrumentation. */
function checkSpans(variant, spans, errors) {
  const toolSpans = spans.ok.spans + spans.error.spans;
  const expected = variant.instrumentsMcp ? CALLS : 0;
  if (toolSpans !== expected) {
    throw new Error(`${toolSpans} tools/call spans for ${CALLS} timed calls (expected ${expected})`);
  }
  if (variant.instrumentsMcp && spans.error.spans !== errors) {
    throw new Error(`${spans.error.spans} tools/call spans with status ERROR for ${errors} tool errors`);
  }
  if (spans.other !== 0) throw new Error(`${spans.other} spans other than tools/call during the timed calls`);
}

async function main() {
  const variant = VARIANTS[name];
  if (variant === undefined) throw new Error(`unknown variant "${name}"`);
  const tracing = variant.tracing ? setUpTracing(variant.isToolSpan) : null;
  const hooks = variant.install(tracing);
  const { client, instrumentedVia } = await connectPair(hooks);

  await callTools(client, 0, WARMUP_CALLS);
  if (tracing !== null) {
    await withTimeout(tracing.provider.forceFlush(), FLUSH_TIMEOUT_MS, 'flushing the warm-up spans');
    tracing.exporter.reset();
  }

  const profiler = await startProfile();
  const machineBefore = machineJiffies();
  const mainThreadBefore = mainThreadCpuMs();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const errors = await callTools(client, WARMUP_CALLS, CALLS);
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const mainThreadAfter = mainThreadCpuMs();
  const machineAfter = machineJiffies();
  const profile = await stopProfile(profiler);

  let spans = null;
  if (tracing !== null) {
    await withTimeout(tracing.provider.forceFlush(), FLUSH_TIMEOUT_MS, 'flushing the timed spans');
    const { ok, error, otherSpans, attributeKeys, sampleSpans } = tracing.exporter;
    // Copies: the exporter goes on counting into its tallies (the allocation calls' spans below).
    spans = {
      ok: { ...ok },
      error: { ...error },
      other: otherSpans,
      attributeKeys: [...attributeKeys],
      samples: sampleSpans,
    };
    checkSpans(variant, spans, errors);
  }
  const maxRssMb = process.resourceUsage().maxRSS / 1024;
  // After the span check: these calls' spans are exported at shutdown and not counted.
  const allocatedBytes = await allocatedBytesPerCall(client, WARMUP_CALLS + CALLS, ALLOC_CALLS);
  const ownCpuMs = (cpu.user + cpu.system) / 1000;
  const machineBusyMs = machineBefore && machineAfter ? (machineAfter.busy - machineBefore.busy) * 10 : null; // USER_HZ = 100
  const result = {
    variant: name,
    round: Number(round),
    calls: CALLS,
    errors,
    instrumentedVia,
    cpuUs: cpu.user + cpu.system,
    userUs: cpu.user,
    systemUs: cpu.system,
    wallMs,
    mainThreadCpuMs: mainThreadBefore === null ? null : mainThreadAfter - mainThreadBefore,
    otherProcessesCpuMs: machineBusyMs === null ? null : Math.max(0, machineBusyMs - ownCpuMs),
    maxRssMb,
    allocatedBytesPerCall: allocatedBytes,
    spans,
    profile,
  };
  await withTimeout(client.close(), FLUSH_TIMEOUT_MS, 'closing the client');
  if (tracing !== null)
    await withTimeout(tracing.provider.shutdown(), FLUSH_TIMEOUT_MS, 'shutting down tracing');
  process.stdout.write(`${RESULT_MARKER}${JSON.stringify(result)}\n`);
}

try {
  await main();
  process.exit(0);
} catch (error) {
  console.error(`child ${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
}
