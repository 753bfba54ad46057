// What the benchmark prints (and optionally writes as JSON): one line per run, then the summary block. Kept apart
// from the measuring code so the output format, which BENCHMARKS.md quotes, lives in one place.
import { writeFileSync } from 'node:fs';
import {
  CONCURRENCY,
  COPY_RUNS,
  JSON_OUT,
  PROJECTION_TIMEOUT_MS,
  REQUESTS,
  RUNS,
  SERVER_CONFIG,
  SERVER_NODE_OPTIONS,
  SPANS_PER_REQUEST,
  WARMUP_REQUESTS,
} from './settings.mjs';
import { fmt } from '../shared/format.mjs';
import { median } from '../shared/median.mjs';

export const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

/** Things that went wrong without invalidating a run; any of them makes the invocation exit 1. */
export const problems = [];

export function headerLine(pgVersion, cpuCount) {
  return (
    `Errata ingest benchmark — node ${process.version}, PostgreSQL ${pgVersion}, ${cpuCount} CPUs\n` +
    `  ${REQUESTS} requests × ${SPANS_PER_REQUEST} spans (+${WARMUP_REQUESTS} warm-up requests per run), ` +
    `concurrency ${CONCURRENCY}, ${RUNS} ingest runs, ${COPY_RUNS} COPY runs; server pool ${SERVER_CONFIG.poolSize}, ` +
    `max concurrent ingests ${SERVER_CONFIG.maxConcurrentIngests}, projector yields to ingest for at most ` +
    `${SERVER_CONFIG.projectionYieldMs} ms` +
    (SERVER_NODE_OPTIONS.length ? `; server node flags: ${SERVER_NODE_OPTIONS.join(' ')}` : '')
  );
}

/** `run` is what ingestRun returns; `stored` is the event row count including the warm-up spans. */
export function ingestRunLine(index, run, stored) {
  const cpu = run.cpuSeconds;
  return (
    `ingest run ${index}/${RUNS}: ${fmt(run.ackedSpans)} spans acked in ${fmt(run.seconds, 2)} s = ` +
    `${fmt(run.spansPerSecond)} spans/s · latency p50 ${fmt(run.p50Ms)} ms, ` +
    `p99 ${fmt(run.p99Ms)} ms · server peak RSS ${fmt(run.peakRssMb ?? NaN, 1)} MB · ` +
    `CPU s: server ${fmt(cpu.server, 1)} (main thread ${fmt(cpu.serverMainThread, 1)}), postgres ${fmt(cpu.postgres, 1)}, bench client ${fmt(cpu.client, 1)}, ` +
    `other processes ${fmt(cpu.other, 1)} · rows ${fmt(stored)} · projector backlog ${fmt(run.projectorBacklogAtEnd)} ` +
    `events at the last ack, caught up ` +
    (run.projectorCatchUpSeconds === null
      ? `NOT within ${PROJECTION_TIMEOUT_MS / 1000} s`
      : `${fmt(run.projectorCatchUpSeconds, 1)} s later`)
  );
}

/** `same` is the checksum remark of the first COPY run, or ''. */
export function copyRunLine(index, rowCount, run, same) {
  const cpu = run.cpuSeconds;
  return (
    `COPY run ${index}/${COPY_RUNS}: ${fmt(rowCount)} rows in ${fmt(run.seconds, 2)} s = ${fmt(run.rowsPerSecond)} rows/s · ` +
    `CPU s: postgres ${fmt(cpu.postgres, 1)}, bench client ${fmt(cpu.client, 1)}, other processes ${fmt(cpu.other, 1)}${same}`
  );
}

/**
 * Spans/s if server, Postgres and client had both cores to themselves, from CPU cost alone (ignores I/O waits):
 * all of it shares 2 cores, and the server's JavaScript runs on one thread, so whichever saturates first.
 */
function cpuBoundEstimate(runs) {
  const spans = REQUESTS * SPANS_PER_REQUEST;
  const all = median(runs.map((r) => r.cpuSeconds.server + r.cpuSeconds.postgres + r.cpuSeconds.client));
  const mainThread = median(runs.map((r) => r.cpuSeconds.serverMainThread));
  return Math.min(spans / (all / 2), spans / mainThread);
}

/** Prints the summary block and writes BENCH_JSON if set; `bodyBytes` is the size of all timed bodies together. */
export function report({ pgVersion, bodyBytes, ingest, copy }) {
  const ingestMedian = median(ingest.map((r) => r.spansPerSecond));
  const copyMedian = copy.length ? median(copy.map((r) => r.rowsPerSecond)) : null;
  const rss = ingest.map((r) => r.peakRssMb ?? NaN);
  const ratio = copyMedian ? ingestMedian / copyMedian : null;
  const summary = [
    '',
    '================ Errata ingest benchmark summary ================',
    `data           ${fmt(REQUESTS)} requests × ${SPANS_PER_REQUEST} MCP tool-call spans (${fmt(bodyBytes / REQUESTS / 1024, 1)} KiB protobuf each), concurrency ${CONCURRENCY}`,
    `ingest         median ${fmt(ingestMedian)} spans/s over ${RUNS} runs (min ${fmt(Math.min(...ingest.map((r) => r.spansPerSecond)))}, max ${fmt(Math.max(...ingest.map((r) => r.spansPerSecond)))})`,
    `latency        median p50 ${fmt(median(ingest.map((r) => r.p50Ms)))} ms, median p99 ${fmt(median(ingest.map((r) => r.p99Ms)))} ms per ${SPANS_PER_REQUEST}-span request`,
    copyMedian
      ? `COPY ceiling   median ${fmt(copyMedian)} rows/s over ${COPY_RUNS} runs (one COPY … FROM STDIN, text, 1 MiB writes, same rows/table/indexes)`
      : 'COPY ceiling   skipped (BENCH_COPY_RUNS=0)',
    ratio !== null ? `ratio          ingest / COPY = ${fmt(ratio, 2)}` : null,
    `server RSS     peak (VmHWM) max ${fmt(Math.max(...rss), 1)} MB, median ${fmt(median(rss), 1)} MB`,
    `CPU per run    median s: server ${fmt(median(ingest.map((r) => r.cpuSeconds.server)), 1)} (main thread ${fmt(median(ingest.map((r) => r.cpuSeconds.serverMainThread)), 1)}), postgres ${fmt(median(ingest.map((r) => r.cpuSeconds.postgres)), 1)}, bench client ${fmt(median(ingest.map((r) => r.cpuSeconds.client)), 1)}, other processes ${fmt(median(ingest.map((r) => r.cpuSeconds.other)), 1)} (wall ${fmt(median(ingest.map((r) => r.seconds)), 1)} s)`,
    `CPU cost       server ${fmt((1e6 * median(ingest.map((r) => r.cpuSeconds.server))) / REQUESTS / SPANS_PER_REQUEST)} µs/span ` +
      `(main thread ${fmt((1e6 * median(ingest.map((r) => r.cpuSeconds.serverMainThread))) / REQUESTS / SPANS_PER_REQUEST)}), ` +
      `postgres ${fmt((1e6 * median(ingest.map((r) => r.cpuSeconds.postgres))) / REQUESTS / SPANS_PER_REQUEST)} µs/span ` +
      `→ CPU-bound estimate on 2 otherwise idle cores ≈ ${fmt(cpuBoundEstimate(ingest))} spans/s`,
    `projector      median backlog at the last ack ${fmt(median(ingest.map((r) => r.projectorBacklogAtEnd)))} events, ` +
      `caught up median ${fmt(median(ingest.map((r) => r.projectorCatchUpSeconds ?? Infinity)), 1)} s later → ` +
      `ingested and projected: median ${fmt(median(ingest.map((r) => r.ackedSpans / (r.seconds + (r.projectorCatchUpSeconds ?? Infinity)))))} spans/s`,
    `targets        ≥ 20,000 spans/s: ${ingestMedian >= 20_000 ? 'MET' : 'NOT MET'}` +
      (ratio !== null ? ` · ≥ 0.5 × COPY: ${ratio >= 0.5 ? 'MET' : 'NOT MET'}` : ''),
    problems.length ? `PROBLEMS       ${problems.join('\n               ')}` : null,
    '=================================================================',
  ].filter((line) => line !== null);
  console.log(summary.join('\n'));

  if (JSON_OUT) {
    writeFileSync(
      JSON_OUT,
      JSON.stringify(
        {
          settings: {
            REQUESTS,
            SPANS_PER_REQUEST,
            CONCURRENCY,
            RUNS,
            COPY_RUNS,
            WARMUP_REQUESTS,
            SERVER_NODE_OPTIONS,
          },
          pgVersion,
          node: process.version,
          ingest: ingest.map(({ fingerprint: _, ...rest }) => rest),
          copy,
          ingestMedian,
          copyMedian,
          ratio,
          problems,
        },
        null,
        2,
      ),
    );
  }
}
