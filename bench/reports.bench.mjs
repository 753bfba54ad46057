#!/usr/bin/env node
// Errata reports benchmark: 5 million tool-call events through real OTLP ingest into real Postgres, then the p50/p95
// latency of every report endpoint over 24-hour and 30-day windows next to a straightforward SQL query over the
// raw event log, and the projection lag while ingesting at 5,000 spans/s. See BENCHMARKS.md.
//
//   npm run bench:reports                      (builds first; or: node bench/reports.bench.mjs after a build)
//
// Environment (all optional):
//   BENCH_DATABASE_URL / DATABASE_URL   base Postgres URL (default postgres://postgres@127.0.0.1:5432/postgres)
//   BENCH_REPORTS_EVENTS=5000000        tool-call events to load (agent, escalation and report events on top)
//   BENCH_REPORTS_DAYS=30               days the corpus spans, ending now
//   BENCH_REPORTS_REQUESTS=40           timed requests per endpoint and window (after BENCH_REPORTS_WARMUP=3)
//   BENCH_REPORTS_BASELINE_RUNS=5       runs of each raw-SQL baseline
//   BENCH_LAG_RATE=5000                 spans/s ingested while projection lag is measured
//   BENCH_LAG_SECONDS=60                how long
//   BENCH_REPORTS_DATABASE=<name>       keep the database under this name, and reuse it when already loaded
//                                       (otherwise a fresh errata_bench_<random> database is dropped at the end)
//   BENCH_JSON=<path>                   also write the results as JSON
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { benchDatabases, dropDatabase, withClient } from './ingest/postgres.mjs';
import { createDatabase } from './ingest/postgres.mjs';
import { liveServers, startServer, stopServer } from './ingest/server.mjs';
import { measureLag } from './reports/lag.mjs';
import { measureLatency } from './reports/latency.mjs';
import { loadCorpus, waitForProjection } from './reports/load.mjs';
import { EVENTS, JSON_OUT, KEEP_DATABASE, LAG_RATE, LAG_SECONDS, READ_KEY } from './reports/settings.mjs';
import { onInterrupt } from './shared/interrupt.mjs';

async function cleanup() {
  for (const server of liveServers) await stopServer(server).catch(() => {});
  for (const name of benchDatabases) await dropDatabase(name).catch(() => {});
}
onInterrupt('stopping the server and dropping the bench database', cleanup);

async function database() {
  if (KEEP_DATABASE === null) return createDatabase();
  const { rows } = await withClient(null, (c) =>
    c.query('SELECT 1 FROM pg_database WHERE datname = $1', [KEEP_DATABASE]),
  );
  if (rows.length === 0) await withClient(null, (c) => c.query(`CREATE DATABASE "${KEEP_DATABASE}"`));
  return KEEP_DATABASE;
}

async function toolCallEvents(name) {
  const { rows } = await withClient(name, (c) =>
    c
      .query(`SELECT count(*)::bigint AS n FROM pg_tables WHERE tablename = 'event'`)
      .then(async (t) =>
        Number(t.rows[0].n) === 0
          ? { rows: [{ n: 0 }] }
          : c.query(`SELECT count(*)::bigint AS n FROM event WHERE type = 'ToolCallObserved'`),
      ),
  );
  return Number(rows[0].n);
}

async function main() {
  const { rows } = await withClient(null, (c) => c.query('SHOW server_version'));
  console.log(
    `reports benchmark: PostgreSQL ${rows[0].server_version}, ${cpus().length} CPUs, Node ${process.version}`,
  );
  const name = await database();
  const already = await toolCallEvents(name);
  const server = await startServer(name, { ERRATA_READ_KEY: READ_KEY });
  const results = { events: EVENTS, database: name };
  if (already >= EVENTS) {
    console.log(`database ${name} already holds ${already} tool-call events: not loading again`);
  } else {
    if (already > 0)
      throw new Error(`database ${name} holds ${already} tool-call events, fewer than ${EVENTS}: drop it`);
    results.load = await loadCorpus(server.port);
    console.log(
      `loaded ${results.load.calls} tool calls (${results.load.spans} spans, ${results.load.traces} traces) in ` +
        `${results.load.seconds.toFixed(0)} s`,
    );
  }
  results.catchUpSeconds = await waitForProjection(name);
  await withClient(name, (c) => c.query('VACUUM ANALYZE'));
  const sizes = await withClient(name, (c) =>
    c.query(`SELECT relname AS table, pg_size_pretty(pg_total_relation_size(oid)) AS size,
                    (SELECT reltuples::bigint FROM pg_class WHERE oid = c.oid) AS rows
               FROM pg_class c WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace
              ORDER BY pg_total_relation_size(oid) DESC LIMIT 8`),
  );
  results.tables = sizes.rows;
  console.log('largest tables:', sizes.rows.map((r) => `${r.table} ${r.size} (~${r.rows} rows)`).join(', '));
  const project = await withClient(name, (c) => c.query(`SELECT id FROM project WHERE name = 'default'`));
  const projectId = project.rows[0].id;

  console.log('report latency (per endpoint and window; raw-SQL = a plain aggregate over the event log):');
  results.latency = await measureLatency(server.port, name, projectId);

  console.log(`projection lag while ingesting ${LAG_RATE} spans/s for ${LAG_SECONDS} s:`);
  results.lag = await measureLag(server.port, name, projectId);
  console.log(
    `  ingested ${results.lag.spans} spans at ${results.lag.rate.toFixed(0)} spans/s (${results.lag.failed} failed ` +
      `requests); lag p50 ${results.lag.lag.p50.toFixed(0)} ms, p95 ${results.lag.lag.p95.toFixed(0)} ms, ` +
      `p99 ${results.lag.p99.toFixed(0)} ms, max ${results.lag.lag.max.toFixed(0)} ms`,
  );

  console.log("report latency again, with the lag phase's spans in the window's last hours:");
  results.latencyAfterLag = await measureLatency(server.port, name, projectId);

  const slow = results.latency.filter((row) => row.report.p95 >= 100);
  console.log(
    slow.length === 0
      ? 'target met: p95 under 100 ms for every report and window'
      : `target missed: p95 ≥ 100 ms for ${slow.map((r) => `${r.window} ${r.endpoint}`).join(', ')}`,
  );
  console.log(
    results.lag.p99 < 2_000
      ? 'target met: projection lag p99 under 2 s'
      : 'target missed: projection lag p99 ≥ 2 s',
  );
  if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify(results, null, 2));
  await stopServer(server);
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(cleanup);
