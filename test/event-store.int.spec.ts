import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointRepository } from '../apps/server/src/repositories/checkpoint.repository';
import { EventRepository, LOG_START, type NewEvent } from '../apps/server/src/repositories/event.repository';
import {
  READ_MODELS_PROJECTION,
  READ_MODELS_VERSION,
  ProjectorService,
} from '../apps/server/src/services/projector.service';
import { startTestServer, type Store, type TestServer } from './support/server';

function event(spanId: string, startMicros = Date.UTC(2026, 10, 30, 15) * 1000 + 1): NewEvent {
  return {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId,
    parentSpanId: null,
    startMicros,
    endMicros: startMicros,
    type: 'AgentRunObserved',
    serverName: null,
    toolName: null,
    outcome: null,
    data: {
      span: {
        traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
        spanId,
        parentSpanId: null,
        startTimeUnixNano: '1',
        endTimeUnixNano: '2',
      },
      agentName: 'a',
      agentId: null,
      conversationId: null,
      role: null,
    },
  };
}

/** The event store's guarantees, on both stores Errata supports. */
describe.each(['postgres', 'pglite'] as Store[])('event store on %s', (store) => {
  let server: TestServer;
  let events: EventRepository;
  let projectId: number;
  beforeAll(async () => {
    // The background projector only runs at start here, so each test decides when batches are projected.
    server = await startTestServer(store, { ERRATA_PROJECTION_POLL_MS: '600000' });
    events = server.app.get(EventRepository);
    projectId = (
      await server.db
        .selectFrom('project')
        .select('id')
        .where('name', '=', 'default')
        .executeTakeFirstOrThrow()
    ).id;
  }, 120_000);
  afterAll(() => server?.close());

  const counts = { received: 3, dropped: 0, rejected: 0 };

  it('appends idempotently by (project, trace, span, start): duplicates across and within requests are stored once', async () => {
    const first = await events.append(
      projectId,
      [event('0000000000000001'), event('0000000000000002')],
      [],
      counts,
    );
    const again = await events.append(
      projectId,
      [event('0000000000000002'), event('0000000000000003'), event('0000000000000003')],
      [],
      counts,
    );
    expect(first.appended).toBe(2);
    expect(again.appended).toBe(1);
    const batches = await server.db
      .selectFrom('ingest_batch')
      .select(['spans_received', 'events_appended'])
      .orderBy('id')
      .execute();
    expect(batches.slice(-2).map((b) => b.events_appended)).toEqual([2, 1]);
  });

  it('keeps the log append-only: rows keep their position when re-sent', async () => {
    const before = await server.db
      .selectFrom('event')
      .select(sql<string>`global_position::text`.as('p'))
      .orderBy('global_position')
      .execute();
    await events.append(projectId, [event('0000000000000001')], [], counts);
    const after = await server.db
      .selectFrom('event')
      .select(sql<string>`global_position::text`.as('p'))
      .orderBy('global_position')
      .execute();
    expect(after).toEqual(before);
  });

  it('projects each event exactly once and refuses a checkpoint moved by someone else', async () => {
    const projector = server.app.get(ProjectorService);
    await projector.settle();
    const checkpoints = server.app.get(CheckpointRepository);
    const current = await checkpoints.get(server.db, READ_MODELS_PROJECTION);
    expect(current?.version).toBe(READ_MODELS_VERSION);
    const stale = LOG_START;
    // A zombie projector that still believes the checkpoint is at the start cannot move it.
    const moved = await checkpoints.compareAndSet(
      server.db,
      READ_MODELS_PROJECTION,
      READ_MODELS_VERSION,
      stale,
      current!.position,
    );
    expect(moved).toBe(false);
    const runs = await server.db
      .selectFrom('agent_run')
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();
    const logged = await server.db
      .selectFrom('event')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('type', '=', 'AgentRunObserved')
      .executeTakeFirstOrThrow();
    expect(runs.n).toBe(logged.n);
  });

  it('rolls back a batch whose checkpoint compare-and-set fails: read models untouched', async () => {
    const projector = server.app.get(ProjectorService);
    await projector.settle();
    await events.append(projectId, [event('00000000000000aa')], [], counts);
    const checkpoints = server.app.get(CheckpointRepository);
    // Sabotage the compare-and-set for one batch, as a competing instance that moved the checkpoint would.
    const original = checkpoints.compareAndSet.bind(checkpoints);
    checkpoints.compareAndSet = async () => false;
    await expect(projector.projectBatch()).rejects.toThrow(/checkpoint moved/);
    checkpoints.compareAndSet = original;
    const projected = await server.db
      .selectFrom('agent_run')
      .select('span_id')
      .where('span_id', '=', Buffer.from('00000000000000aa', 'hex'))
      .execute();
    expect(projected).toHaveLength(0);
    await projector.settle();
    const after = await server.db
      .selectFrom('agent_run')
      .select('span_id')
      .where('span_id', '=', Buffer.from('00000000000000aa', 'hex'))
      .execute();
    expect(after).toHaveLength(1);
  });
});
