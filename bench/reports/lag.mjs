// Projection lag under load: OTLP ingest at LAG_RATE spans/s for LAG_SECONDS, and for every acknowledged request
// the time until the projector's checkpoint passes its events (read models, contributions and rollups are
// written in the same transaction as the checkpoint, so that is when the reports include them).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { urlFor } from '../ingest/postgres.mjs';
import { ROOT } from '../ingest/settings.mjs';
import { agentTrace, exportRequest } from './corpus.mjs';
import { postTraces } from './http.mjs';
import { summary } from './latency.mjs';
import { LAG_RATE, LAG_SECONDS } from './settings.mjs';

const require = createRequire(import.meta.url);
const pg = require('pg');
const { encodeTraceRequestProtobuf } = require(join(ROOT, 'libs/otlp/dist/index.js'));

const TICK_MS = 100;
const POLL_MS = 20;

const position = (row) => [BigInt(row.xid), BigInt(row.pos)];
const reached = (checkpoint, target) =>
  checkpoint[0] > target[0] || (checkpoint[0] === target[0] && checkpoint[1] >= target[1]);

export async function measureLag(port, database, projectId) {
  const client = new pg.Client({ connectionString: urlFor(database) });
  const lookups = new pg.Pool({ connectionString: urlFor(database), max: 4 });
  await client.connect();
  try {
    const perTick = Math.max(1, Math.round((LAG_RATE * TICK_MS) / 1000));
    const pending = [];
    const lags = [];
    let sent = 0;
    let failed = 0;
    let stop = false;
    // Checkpoint poller: resolves every acknowledged request whose last event the projector has passed.
    const poller = (async () => {
      while (!stop || pending.length > 0) {
        const { rows } = await client.query(
          `SELECT transaction_id::text AS xid, global_position::text AS pos FROM projection_checkpoint WHERE name = 'read-models'`,
        );
        const checkpoint = position(rows[0]);
        const now = performance.now();
        for (let i = pending.length - 1; i >= 0; i--) {
          const entry = pending[i];
          if (entry.target !== null && reached(checkpoint, entry.target)) {
            lags.push(now - entry.ackedAt);
            pending.splice(i, 1);
          }
        }
        if (stop && pending.length > 0 && now - pending[0].ackedAt > 120_000)
          throw new Error('projection lag above 120 s');
        await sleep(POLL_MS);
      }
    })();
    const inFlight = new Set();
    const began = performance.now();
    for (let tick = 0; performance.now() - began < LAG_SECONDS * 1000; tick++) {
      const spans = [];
      const traceIds = new Set();
      while (spans.length < perTick) {
        // Started 15 minutes ago: a trace lasts up to about 10 minutes, and spans are exported once they ended.
        const trace = agentTrace(Date.now() - 15 * 60_000);
        for (const span of trace) traceIds.add(span.traceId);
        spans.push(...trace);
      }
      const body = encodeTraceRequestProtobuf(exportRequest(spans));
      const request = (async () => {
        try {
          await postTraces(port, body);
        } catch {
          failed++;
          return;
        }
        const entry = { ackedAt: performance.now(), target: null };
        pending.push(entry);
        sent += spans.length;
        const { rows } = await lookups.query(
          `SELECT transaction_id::text AS xid, max(global_position)::text AS pos FROM event
            WHERE project_id = $1 AND trace_id = ANY (ARRAY(SELECT decode(t, 'hex') FROM unnest($2::text[]) AS t))
            GROUP BY transaction_id ORDER BY transaction_id DESC LIMIT 1`,
          [projectId, [...traceIds]],
        );
        entry.target = position(rows[0]);
      })();
      inFlight.add(request);
      void request.finally(() => inFlight.delete(request));
      const nextTick = began + (tick + 1) * TICK_MS;
      await sleep(Math.max(0, nextTick - performance.now()));
    }
    const seconds = (performance.now() - began) / 1000;
    await Promise.all(inFlight);
    stop = true;
    await poller;
    return { rate: sent / seconds, spans: sent, failed, lag: summary(lags), p99: percentile99(lags) };
  } finally {
    await client.end();
    await lookups.end();
  }
}

function percentile99(times) {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)];
}
