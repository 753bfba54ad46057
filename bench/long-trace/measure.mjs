// The long-trace benchmark's measurements at one size: grow the trace (or the short traces) to it, then time small
// batches projected one at a time and as a stream, count the rows the database read and wrote, and time a page.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { urlFor } from '../ingest/postgres.mjs';
import { ROOT } from '../ingest/settings.mjs';
import { exportRequest } from '../reports/corpus.mjs';
import { getReport, postTraces } from '../reports/http.mjs';
import { BATCH_SPANS, GROW_SPANS, PAGES, PROBES, PROJECTION_TIMEOUT_MS, STREAM } from './settings.mjs';
import { median } from '../shared/median.mjs';

const require = createRequire(import.meta.url);
const pg = require('pg');
const { encodeTraceRequestProtobuf } = require(join(ROOT, 'libs/otlp/dist/index.js'));

/** PostgreSQL sends a backend's table counters at most once a second (PGSTAT_MIN_INTERVAL): wait that out. */
const STATS_FLUSH_MS = 1_500;
const POLL_MS = 5;

const post = (port, spans) => postTraces(port, encodeTraceRequestProtobuf(exportRequest(spans)));

/** The last position of each log: what the read-models and span-edges checkpoints must reach. One index probe each. */
const LAST_POSITIONS_SQL = `
  SELECT 'read-models' AS name, transaction_id::text AS xid, global_position::text AS pos FROM
         (SELECT * FROM event ORDER BY transaction_id DESC, global_position DESC LIMIT 1) AS e
  UNION ALL
  SELECT 'span-edges', transaction_id::text, global_position::text FROM
         (SELECT * FROM span_edge ORDER BY transaction_id DESC, global_position DESC LIMIT 1) AS s`;
/** Where both checkpoints stand: reads the checkpoint table only (left out of the counts). */
const CHECKPOINTS_SQL = `SELECT name, transaction_id::text AS xid, global_position::text AS pos FROM projection_checkpoint`;
const position = (row) => [BigInt(row.xid), BigInt(row.pos)];
const passed = (checkpoint, target) =>
  checkpoint[0] > target[0] || (checkpoint[0] === target[0] && checkpoint[1] >= target[1]);

/** Rows read (sequential scans, and index entries every index scan returned) and written, the checkpoints left out. */
const COUNTERS_SQL = `
  SELECT (SELECT coalesce(sum(seq_tup_read), 0) FROM pg_stat_user_tables WHERE relname <> 'projection_checkpoint')
       + (SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes WHERE relname <> 'projection_checkpoint')
         AS read,
         (SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables
           WHERE relname <> 'projection_checkpoint') AS written`;

/** Waits until the projector has applied everything stored so far; returns when (performance.now()). */
async function projected(client) {
  const { rows: targets } = await client.query(LAST_POSITIONS_SQL);
  const started = performance.now();
  for (;;) {
    const { rows } = await client.query(CHECKPOINTS_SQL);
    const at = new Map(rows.map((row) => [row.name, position(row)]));
    if (targets.every((t) => at.has(t.name) && passed(at.get(t.name), position(t)))) return performance.now();
    if (performance.now() - started > PROJECTION_TIMEOUT_MS)
      throw new Error('the projector did not catch up');
    await sleep(POLL_MS);
  }
}

async function counters(client) {
  await sleep(STATS_FLUSH_MS);
  const { rows } = await client.query(COUNTERS_SQL);
  return { read: Number(rows[0].read), written: Number(rows[0].written) };
}

export async function measureSize(port, database, source, calls) {
  const client = new pg.Client({ connectionString: urlFor(database) });
  await client.connect();
  try {
    const growing = performance.now();
    while (source.calls() < calls) await post(port, source.take(GROW_SPANS));
    await projected(client);
    const growSeconds = (performance.now() - growing) / 1000;

    // Small batches one at a time: each request's time from its acknowledgement until the projector passed it.
    const before = await counters(client);
    const batches = [];
    for (let i = 0; i < PROBES; i++) {
      await post(port, source.take(BATCH_SPANS));
      const acked = performance.now();
      batches.push((await projected(client)) - acked);
    }
    const after = await counters(client);

    // A stream of them, back to back: the spans/s until all are projected, and the lag after the last ack.
    const streaming = performance.now();
    for (let i = 0; i < STREAM; i++) await post(port, source.take(BATCH_SPANS));
    const lastAck = performance.now();
    const done = await projected(client);

    const path = `/api/v1/traces/${source.traceId()}?limit=50`;
    const pages = [];
    for (let i = 0; i < PAGES + 2; i++) {
      const began = performance.now();
      await getReport(port, path);
      if (i >= 2) pages.push(performance.now() - began);
    }

    const result = {
      calls: source.calls(),
      growSeconds,
      batchMs: median(batches),
      rowsRead: (after.read - before.read) / PROBES,
      rowsWritten: (after.written - before.written) / PROBES,
      streamSpansPerSecond: (STREAM * BATCH_SPANS) / ((done - streaming) / 1000),
      streamLagMs: done - lastAck,
      pageMs: median(pages),
    };
    console.log(
      `  ${calls} calls (${result.calls} taken; grown in ${growSeconds.toFixed(1)} s): batch ${result.batchMs.toFixed(1)} ms, ` +
        `${result.rowsRead.toFixed(0)} rows read / ${result.rowsWritten.toFixed(0)} written per batch; stream ` +
        `${result.streamSpansPerSecond.toFixed(0)} spans/s, lag ${result.streamLagMs.toFixed(0)} ms; ` +
        `page ${result.pageMs.toFixed(1)} ms`,
    );
    return result;
  } finally {
    await client.end();
  }
}
