/**
 * During a burst of OTLP requests the background projector gives way to ingest (README "How reports are
 * computed", BENCHMARKS.md): its next batch waits for a moment with no request in flight, ERRATA_PROJECTION_YIELD_MS
 * at most. A request is held in flight here by a second connection's uncommitted row with the same key as one of
 * its spans: the request's COPY waits on that key until the row is rolled back.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { sql, type RawBuilder } from 'kysely';
import { Client } from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { EventRepository } from '../apps/server/src/repositories/event.repository';
import { IngestActivity } from '../apps/server/src/services/ingest-activity';
import { ProjectorService } from '../apps/server/src/services/projector.service';
import { agentRunEvent } from './support/agent-run-event';
import { generatedCorpus } from './support/generated-corpus';
import { defaultProjectId, sendSpans, startTestServer, type TestServer } from './support/server';
import { until } from './support/until';

const START_MS = Date.UTC(2026, 10, 30, 9);
/** The run committed before the request in flight, which the projector must leave for after it. */
let committedRun = '';

describe('the projector yields to ingest', () => {
  let server: TestServer | undefined;
  let blocker: Client | undefined;
  afterEach(async () => {
    await blocker?.end().catch(() => undefined);
    await server?.close();
    blocker = server = undefined;
  });

  /**
   * A server whose projector runs only when woken, with one agent run appended straight to the log: committed
   * before anything holds a request in flight, so nothing but the yield keeps the projector from it. The run is
   * appended only after the projector's first pass at startup has committed (it creates the checkpoints): a pass
   * still reading the log could otherwise project the run before the test holds a request in flight.
   */
  async function serverWithUnprojectedRun(yieldMs: number) {
    const started = await startTestServer('postgres', {
      ERRATA_PROJECTION_POLL_MS: '600000',
      ERRATA_PROJECTION_YIELD_MS: String(yieldMs),
    });
    server = started;
    await until(
      "the projector's first pass",
      async () =>
        (await started.db.selectFrom('projection_checkpoint').select('name').execute()).length === 2,
      20_000,
    );
    const projectId = await defaultProjectId(started.db);
    // The projector's first pass may still be running, and project a run appended now: then another is the one left.
    for (let attempt = 1; ; attempt++) {
      committedRun = `00000000000000c${attempt}`;
      await started.app
        .get(EventRepository)
        .append(projectId, [agentRunEvent(committedRun)], [], { received: 1, dropped: 0, rejected: 0 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (!(await runProjected(started))) break;
      if (attempt === 9) throw new Error("the projector's first pass did not end");
    }
    return { server: started, projector: started.app.get(ProjectorService) };
  }

  /** Sends `spans` in a request that stays in flight until the returned `release` is called. */
  async function requestInFlight(target: TestServer, spans: ReadableSpan[]) {
    const held = spans[0]!;
    const [seconds, nanos] = held.startTime;
    const startMicros = seconds * 1_000_000 + Math.floor(nanos / 1_000);
    blocker = new Client({ connectionString: target.databaseUrl! });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query(
      `INSERT INTO event (project_id, trace_id, span_id, start_time, end_time, type, data)
       SELECT id, decode($1, 'hex'), decode($2, 'hex'), timestamptz 'epoch' + $3 * interval '1 microsecond',
              timestamptz 'epoch' + $3 * interval '1 microsecond', 'AgentRunObserved', '{}'
         FROM project WHERE name = 'default'`,
      [held.spanContext().traceId, held.spanContext().spanId, startMicros],
    );
    const activity = target.app.get(IngestActivity);
    const status = sendSpans(target.url, target.ingestKey, spans);
    await until('the request to be in flight', () => activity.requestsInFlight === 1, 20_000);
    const client = blocker;
    return {
      release: async () => {
        await client.query('ROLLBACK');
        return status;
      },
    };
  }

  const runProjected = async (target: TestServer) =>
    (await sql`SELECT 1 FROM agent_run WHERE span_id = decode(${committedRun}, 'hex')`.execute(target.db))
      .rows.length === 1;
  /**
   * Wakes the projector before each look: a transaction another test file holds open on this PostgreSQL server holds
   * the log's horizon back for a moment, and with a 600 s poll one wake that found nothing to read would be the last.
   */
  const projectedAfterWake = (projector: ProjectorService, target: TestServer) => {
    projector.wake();
    return runProjected(target);
  };

  it('waits while a request is in flight and projects as soon as it is answered', async () => {
    const { server: target, projector } = await serverWithUnprojectedRun(600_000);
    const burst = await requestInFlight(target, generatedCorpus({ traces: 3, seed: 6, startMs: START_MS }));
    projector.wake();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await runProjected(target)).toBe(false);

    expect(await burst.release()).toBe(200);
    await until('the committed run to be projected', () => projectedAfterWake(projector, target), 20_000);
    const count = async (query: RawBuilder<{ n: string }>) =>
      Number((await query.execute(target.db)).rows[0]!.n);
    const calls = await count(sql`SELECT count(*) AS n FROM event WHERE type = 'ToolCallObserved'`);
    expect(calls).toBeGreaterThan(0);
    await until(
      "the released request's calls to be projected",
      async () => {
        projector.wake();
        return (await count(sql`SELECT count(*) AS n FROM tool_call`)) === calls;
      },
      20_000,
    );
  }, 60_000);

  it('stops waiting at shutdown, and leaves the batch for the next start', async () => {
    const { server: target, projector } = await serverWithUnprojectedRun(600_000);
    const burst = await requestInFlight(target, generatedCorpus({ traces: 3, seed: 9, startMs: START_MS }));
    projector.wake();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stopped = Date.now();
    await projector.beforeApplicationShutdown();
    expect(Date.now() - stopped).toBeLessThan(5_000); // not the 600 s yield
    expect(await burst.release()).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await runProjected(target)).toBe(false);
  }, 60_000);

  it('waits ERRATA_PROJECTION_YIELD_MS at most', async () => {
    const { server: target, projector } = await serverWithUnprojectedRun(200);
    const burst = await requestInFlight(target, generatedCorpus({ traces: 3, seed: 8, startMs: START_MS }));
    projector.wake();
    await until('the committed run to be projected', () => projectedAfterWake(projector, target), 20_000);
    expect(target.app.get(IngestActivity).requestsInFlight).toBe(1);
    expect(await burst.release()).toBe(200);
  }, 60_000);
});
