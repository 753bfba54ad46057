// Loading the corpus through the real OTLP/HTTP ingest, then waiting for the projector to catch up.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PROJECTION_POSITIONS_SQL, withClient } from '../ingest/postgres.mjs';
import { ROOT } from '../ingest/settings.mjs';
import { agentTrace, exportRequest, toolCalls } from './corpus.mjs';
import { postTraces } from './http.mjs';
import { DAYS, EVENTS, LOAD_CONCURRENCY, PROJECTION_TIMEOUT_MS, SPANS_PER_REQUEST } from './settings.mjs';

const require = createRequire(import.meta.url);
const { encodeTraceRequestProtobuf } = require(join(ROOT, 'libs/otlp/dist/index.js'));
const { ProgressBar } = require(join(ROOT, 'apps/server/dist/cli/progress-bar.js'));

const DAY_MS = 86_400_000;

/**
 * Sends agent traces spread evenly over the last DAYS days (ending 20 minutes ago: a trace lasts up to about 10
 * minutes, and nothing may lie in the future) until EVENTS tool calls went out, SPANS_PER_REQUEST spans per request,
 * LOAD_CONCURRENCY requests in flight. Returns counts.
 */
export async function loadCorpus(port) {
  const end = Date.now() - 20 * 60_000;
  const start = end - DAYS * DAY_MS;

  const progress = new ProgressBar('loading tool-call events through OTLP ingest', EVENTS);
  let calls = 0;
  let spans = 0;
  let traces = 0;
  let pending = [];
  const nextBody = () => {
    if (calls >= EVENTS && pending.length === 0) return null;
    while (pending.length < SPANS_PER_REQUEST && calls < EVENTS) {
      // Start times follow the share of tool calls sent, so the last trace starts at `end` whatever the mix.
      const trace = agentTrace(start + (calls / EVENTS) * (end - start));
      traces++;
      calls += toolCalls(trace);
      pending.push(...trace);
    }
    const batch = pending.slice(0, SPANS_PER_REQUEST);
    pending = pending.slice(SPANS_PER_REQUEST);
    spans += batch.length;
    return { body: encodeTraceRequestProtobuf(exportRequest(batch)), calls: toolCalls(batch) };
  };
  let sentCalls = 0;
  const worker = async () => {
    for (let next = nextBody(); next !== null; next = nextBody()) {
      await postTraces(port, next.body);
      sentCalls += next.calls;
      progress.update(sentCalls);
    }
  };
  const began = Date.now();
  await Promise.all(Array.from({ length: LOAD_CONCURRENCY }, worker));
  progress.finish(sentCalls);
  return { calls: sentCalls, spans, traces, seconds: (Date.now() - began) / 1000 };
}

/** Waits until the projector has applied every stored event and edge; progress by log position. */
export async function waitForProjection(database) {
  const began = Date.now();
  const { rows: counted } = await withClient(database, (c) =>
    c.query('SELECT count(*)::bigint AS n FROM event'),
  );
  const events = Number(counted[0].n);
  const progress = new ProgressBar('projecting (read models, contributions, rollups)', events);
  for (;;) {
    const { rows } = await withClient(database, (c) => c.query(PROJECTION_POSITIONS_SQL));
    const { last, projected, done } = rows[0];
    const share = last === null ? 1 : Number(projected ?? 0) / Number(last);
    progress.update(Math.round(share * events));
    if (done && projected !== null) {
      progress.finish(events);
      return (Date.now() - began) / 1000;
    }
    if (Date.now() - began > PROJECTION_TIMEOUT_MS) throw new Error('the projector did not catch up in time');
    await sleep(2_000);
  }
}
