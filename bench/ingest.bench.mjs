#!/usr/bin/env node
// Errata ingest throughput benchmark: OTLP/HTTP protobuf → POST /v1/traces → Postgres, end to end, against
// the COPY ceiling of the same rows into the same table on the same Postgres. See BENCHMARKS.md.
//
//   npm run bench:ingest                        (builds first; or: node bench/ingest.bench.mjs after a build)
//
// Environment (all optional):
//   BENCH_DATABASE_URL / DATABASE_URL  base Postgres URL; databases errata_bench_<random> are created and dropped
//                                      on it (default postgres://postgres@127.0.0.1:5432/postgres)
//   BENCH_REQUESTS=200                 timed requests per ingest run
//   BENCH_SPANS_PER_REQUEST=512        tool-call spans per request (the SDK BatchSpanProcessor's default batch)
//   BENCH_CONCURRENCY=8                requests in flight
//   BENCH_RUNS=5                       ingest runs (each: fresh database, fresh server)
//   BENCH_COPY_RUNS=<BENCH_RUNS>       COPY-ceiling runs (0 = skip the COPY ceiling)
//   BENCH_WARMUP_REQUESTS=8            untimed requests per run before the timed ones (JIT, pool); own span ids
//   BENCH_SERVER_NODE_OPTIONS=""       extra node flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
//   BENCH_JSON=<path>                  also write the results as JSON
// Every other ERRATA_* variable in the environment is passed to the server as is (e.g. ERRATA_PG_POOL_SIZE,
// ERRATA_MAX_CONCURRENT_INGESTS); the COPY rows are built with the same text/attribute limits the server uses.
//
// The pieces live in bench/ingest/: settings (this environment), workload (the bodies), server and postgres (one
// fresh server and database per run), ingest-run and copy-ceiling (the two measured phases), cpu (/proc
// accounting), report (what is printed).
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { copyChunks, copyRun, eventLines } from './ingest/copy-ceiling.mjs';
import { ingestRun } from './ingest/ingest-run.mjs';
import { benchDatabases, dropDatabase, withClient } from './ingest/postgres.mjs';
import { headerLine, problems, report } from './ingest/report.mjs';
import { fmt } from './shared/format.mjs';
import { onInterrupt } from './shared/interrupt.mjs';
import { liveServers, stopServer } from './ingest/server.mjs';
import { COPY_RUNS, REQUESTS, RUNS, SPANS_PER_REQUEST, WARMUP_REQUESTS } from './ingest/settings.mjs';
import { generateBodies } from './ingest/workload.mjs';

let cleaningUp = null;

/** Stops whatever servers and drops whatever bench databases are left, on every way out (error, signal, success). */
function cleanup() {
  cleaningUp ??= (async () => {
    for (const server of liveServers) await stopServer(server).catch(() => {});
    for (const name of benchDatabases) await dropDatabase(name).catch(() => {});
  })();
  return cleaningUp;
}

onInterrupt('stopping servers and dropping bench databases', cleanup, { forceExitAfterMs: 30_000 });

async function main() {
  const { rows } = await withClient(null, (c) => c.query('SHOW server_version'));
  const pgVersion = rows[0].server_version;
  console.log(headerLine(pgVersion, cpus().length));

  const generationStarted = performance.now();
  const bodies = generateBodies(REQUESTS, false);
  const warmupBodies = generateBodies(WARMUP_REQUESTS, true);
  const bodyBytes = bodies.reduce((sum, body) => sum + body.length, 0);
  const lines = COPY_RUNS > 0 ? eventLines(bodies) : [];
  console.log(
    `generated ${fmt(REQUESTS)} bodies (${fmt(bodyBytes / REQUESTS / 1024, 1)} KiB each, ` +
      `${fmt(bodyBytes / (REQUESTS * SPANS_PER_REQUEST))} B/span) in ${fmt((performance.now() - generationStarted) / 1000, 1)} s`,
  );

  const ingest = [];
  for (let run = 1; run <= RUNS; run++) ingest.push(await ingestRun(run, bodies, warmupBodies));

  const copy = [];
  if (COPY_RUNS > 0) {
    const chunks = copyChunks(ingest[0].projectId, lines);
    const copyBytes = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    console.log(
      `COPY payload: ${fmt(lines.length)} rows, ${fmt(copyBytes / 1048576, 1)} MiB text in ${chunks.length} chunks`,
    );
    for (let run = 1; run <= COPY_RUNS; run++)
      copy.push(await copyRun(run, chunks, lines.length, ingest[0].fingerprint));
  }

  report({ pgVersion, bodyBytes, ingest, copy });
  return problems.length === 0;
}

let ok = false;
try {
  ok = await main();
} catch (error) {
  console.error(`\nBENCHMARK FAILED: ${error instanceof Error ? error.message : String(error)}`);
} finally {
  await cleanup();
}
process.exit(ok ? 0 : 1);
