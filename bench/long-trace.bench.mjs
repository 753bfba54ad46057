#!/usr/bin/env node
// Errata long-trace benchmark: what a trace that keeps growing costs the projector and the timeline. One agent
// session streams its spans into ONE trace in small OTLP batches, as an exporter sends them, through a real server
// into real Postgres; at each size (1,000 / 5,000 / 20,000 calls) the bench times the projection of a few more
// small batches, one at a time, and of a stream of them, counts the rows the database read and wrote for them, and
// times a timeline page of the trace. The baseline is the same number of calls in the same turns, each turn a short
// trace of its own, measured the same way in the same run. See BENCHMARKS.md.
//
//   npm run bench:long-trace                   (builds first; or: node bench/long-trace.bench.mjs after a build)
//
// Environment (all optional):
//   BENCH_DATABASE_URL / DATABASE_URL     base Postgres URL (default postgres://postgres@127.0.0.1:5432/postgres)
//   BENCH_LONG_TRACE_CALLS=1000,5000,20000  the sizes measured, in calls of the trace (or of all short traces)
//   BENCH_LONG_TRACE_RUNS=3               runs of the whole measurement; figures are the median over runs
//   BENCH_LONG_TRACE_BATCH_SPANS=25       spans per OTLP request in the timed phases (an exporter's small batch)
//   BENCH_LONG_TRACE_PROBES=5             requests projected one at a time at each size
//   BENCH_LONG_TRACE_STREAM=20            requests sent back to back at each size, then the lag until projected
//   BENCH_LONG_TRACE_PAGES=10             timed timeline pages at each size (after 2 untimed)
//   BENCH_LONG_TRACE_DATABASE_PREFIX=errata_bench_   prefix of the databases made (and dropped) per run and shape
//   BENCH_JSON=<path>                     also write the results as JSON
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dropDatabase, withClient } from './ingest/postgres.mjs';
import { liveServers, startServer, stopServer } from './ingest/server.mjs';
import { measureSize } from './long-trace/measure.mjs';
import { spanSource } from './long-trace/session.mjs';
import { CALLS, DATABASE_PREFIX, JSON_OUT, RUNS } from './long-trace/settings.mjs';
import { READ_KEY } from './reports/settings.mjs';
import { onInterrupt } from './shared/interrupt.mjs';
import { median } from './shared/median.mjs';

const databases = new Set();

async function cleanup() {
  for (const server of liveServers) await stopServer(server).catch(() => {});
  for (const name of databases) await dropDatabase(name).catch(() => {});
}
onInterrupt('stopping the server and dropping the bench databases', cleanup);

/** One shape in a database and server of its own, grown through every size. */
async function measureShape(shape) {
  const name = `${DATABASE_PREFIX}${shape}_${randomBytes(4).toString('hex')}`;
  await withClient(null, (c) => c.query(`CREATE DATABASE "${name}"`));
  databases.add(name);
  const server = await startServer(name, { ERRATA_READ_KEY: READ_KEY });
  try {
    // Spans must not lie in the future: the session starts early enough for the largest size at ~4 s a call.
    const source = spanSource(shape, Date.now() - (CALLS.at(-1) + 2_000) * 4_000);
    const sizes = [];
    for (const calls of CALLS) sizes.push(await measureSize(server.port, name, source, calls));
    return sizes;
  } finally {
    await stopServer(server);
    await dropDatabase(name);
    databases.delete(name);
  }
}

const FIGURES = [
  ['batchMs', 'projection of one small batch, ms', 1],
  ['rowsRead', 'rows read per batch', 0],
  ['rowsWritten', 'rows written per batch', 0],
  ['streamSpansPerSecond', 'stream: spans/s until projected', 0],
  ['streamLagMs', 'stream: lag after the last ack, ms', 0],
  ['pageMs', 'timeline page (limit=50), ms', 1],
];

async function main() {
  const { rows } = await withClient(null, (c) => c.query('SHOW server_version'));
  console.log(
    `long-trace benchmark: PostgreSQL ${rows[0].server_version}, ${cpus().length} CPUs, Node ${process.version}; ` +
      `sizes ${CALLS.join(', ')} calls, ${RUNS} runs`,
  );
  const runs = [];
  for (let run = 1; run <= RUNS; run++) {
    const result = {};
    for (const shape of ['long', 'short']) {
      console.log(`run ${run}/${RUNS}: ${shape === 'long' ? 'one long trace' : 'short traces (baseline)'}`);
      result[shape] = await measureShape(shape);
    }
    runs.push(result);
  }
  const table = CALLS.map((calls, i) => {
    const row = { calls };
    for (const shape of ['long', 'short'])
      for (const [figure] of FIGURES)
        row[`${shape}.${figure}`] = median(runs.map((r) => r[shape][i][figure]));
    return row;
  });
  console.log(`\nmedians over ${RUNS} runs (long trace / short traces = ratio):`);
  for (const [figure, label, digits] of FIGURES) {
    console.log(`  ${label}`);
    for (const row of table) {
      const [long, short] = [row[`long.${figure}`], row[`short.${figure}`]];
      const ratio = long !== null && short ? (long / short).toFixed(2) : '-';
      console.log(
        `    ${String(row.calls).padStart(6)} calls: ${long?.toFixed(digits)} / ${short?.toFixed(digits)} = ${ratio}`,
      );
    }
  }
  if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify({ runs, medians: table }, null, 2));
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(cleanup);
