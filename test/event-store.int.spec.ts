import { sql } from 'kysely';
import { Client } from 'pg';
import { Logger } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CheckpointRepository } from '../apps/server/src/repositories/checkpoint.repository';
import { EventRepository, LOG_START } from '../apps/server/src/repositories/event.repository';
import { READ_MODELS_PROJECTION } from '../apps/server/src/projections/projection-logs';
import {
  PROJECTOR_LOCK,
  READ_MODELS_VERSION,
  ProjectorService,
} from '../apps/server/src/services/projector.service';
import { agentRunEvent as event } from './support/agent-run-event';
import { withLogHorizonHeld } from './support/postgres';
import { until } from './support/until';
import { defaultProjectId, startTestServer, type Store, type TestServer } from './support/server';

/** What a spy on Nest's Logger was told, each message as text. */
const messagesOf = (spy: { mock: { calls: unknown[][] } }): string[] =>
  spy.mock.calls.map(([message]) => String(message));

/** The event store's guarantees, on both stores Errata supports. */
describe.each(['postgres', 'pglite'] as Store[])('event store on %s', (store) => {
  let server: TestServer;
  let events: EventRepository;
  let projectId: number;
  beforeAll(async () => {
    // The background projector only runs at start here, so each test decides when batches are projected.
    server = await startTestServer(store, { ERRATA_PROJECTION_POLL_MS: '600000' });
    events = server.app.get(EventRepository);
    projectId = await defaultProjectId(server.db);
  }, 120_000);
  afterAll(() => server?.close());

  const counts = { received: 3, dropped: 0, rejected: 0 };

  /** Both projections' checkpoints as an Errata of rules `version` would have left them. */
  const setCheckpointVersion = (version: number) =>
    server.db.updateTable('projection_checkpoint').set({ version }).execute();

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

  it('leaves read models of a newer rules version alone: a newer Errata projects this database, not this one', async () => {
    const projector = server.app.get(ProjectorService);
    await projector.settle();
    const runs = async () => (await server.db.selectFrom('agent_run').select('span_id').execute()).length;
    const projected = await runs();
    // Given checkpoints a newer Errata wrote, and an event it has not projected yet
    await setCheckpointVersion(READ_MODELS_VERSION + 1);
    await events.append(projectId, [event('00000000000000bb')], [], counts);
    // When this Errata catches up, or is asked to rebuild
    expect(await projector.catchUp()).toBe(0);
    await expect(projector.rebuild()).rejects.toThrow(/rules version \d+, newer than this Errata's/);
    // Then it truncated nothing and projected nothing: the checkpoints are the newer Errata's
    expect(await runs()).toBe(projected);
    const versions = await server.db.selectFrom('projection_checkpoint').select('version').execute();
    expect(versions.map((row) => row.version)).toEqual([READ_MODELS_VERSION + 1, READ_MODELS_VERSION + 1]);
    // And once the checkpoints are of its version again (that Errata stopped, the database was rebuilt), it goes on
    await setCheckpointVersion(READ_MODELS_VERSION);
    await projector.settle();
    expect(await runs()).toBe(projected + 1);
  });

  it('leaves the read models alone once a newer Errata migrated the database, under the same rules version too', async () => {
    const projector = server.app.get(ProjectorService);
    await projector.settle();
    const runs = async () => (await server.db.selectFrom('agent_run').select('span_id').execute()).length;
    const projected = await runs();
    const warnings = vi.spyOn(Logger.prototype, 'warn');
    try {
      // Given a migration this release does not have, applied while it runs (an upgrade beside it), and a new event
      await sql`INSERT INTO kysely_migration (name, timestamp) VALUES ('9999_next_release', now()::text)`.execute(
        server.db,
      );
      await events.append(projectId, [event('00000000000000bd')], [], counts);
      // When this Errata catches up, twice
      expect(await projector.catchUp()).toBe(0);
      expect(await projector.catchUp()).toBe(0);
      // Then it projected nothing, and said why once
      expect(await runs()).toBe(projected);
      expect(messagesOf(warnings).filter((line) => /9999_next_release/.test(line))).toEqual([
        'a newer Errata migrated this database since this one started (migration 9999_next_release, which this ' +
          'release does not have): it projects this database, so this one does not (upgrade it, or stop it)',
      ]);
    } finally {
      warnings.mockRestore();
      await sql`DELETE FROM kysely_migration WHERE name = '9999_next_release'`.execute(server.db);
    }
    // And without it (the upgrade rolled back) it goes on
    await projector.settle();
    expect(await runs()).toBe(projected + 1);
  });

  it('rebuilds the read models when the rules version changed, and says when it is done', async () => {
    const projector = server.app.get(ProjectorService);
    await projector.settle();
    const runs = async () => (await server.db.selectFrom('agent_run').select('span_id').execute()).length;
    const projected = await runs();
    const lines = vi.spyOn(Logger.prototype, 'log');
    try {
      // Given checkpoints an older Errata wrote
      await setCheckpointVersion(READ_MODELS_VERSION - 1);
      // When this one catches up, it rebuilds the read models from the log, with the same result
      await projector.settle();
      expect(await runs()).toBe(projected);
      const said = messagesOf(lines);
      expect(said).toContain(
        `rules version changed to ${READ_MODELS_VERSION}: rebuilding the read models from the log`,
      );
      expect(
        said.filter((line) => /^read models rebuilt: \d+ records of the log in \d+\.\d s$/.test(line)),
      ).toHaveLength(1);
    } finally {
      lines.mockRestore();
    }
  });

  it('says how a rebuild another process began goes on, and when it ended; a rebuild it began itself it leaves to its caller', async () => {
    const projector = server.app.get(ProjectorService);
    const modules = server.app.get(ModuleRef);
    // The log grows between the rebuilds, as it does: each begins with a point to pass of its own
    await events.append(projectId, [event('00000000000000dd')], [], counts);
    await projector.settle();
    const lines = vi.spyOn(Logger.prototype, 'log');
    const said = () => messagesOf(lines);
    const rebuilt = () =>
      said().filter((line) => /^read models rebuilt: \d+ records of the log in \d+\.\d s$/.test(line));
    const goingOn = 'rebuilding the read models from the log: going on with a rebuild begun earlier';
    try {
      // Given a rebuild another Errata process began and did not see through (stopped midway, or `projections rebuild`)
      await (await modules.create(ProjectorService)).beginRebuild();
      // When this one catches up, it says it goes on with it, and when it ended
      await projector.settle();
      expect(said()).toContain(goingOn);
      expect(rebuilt()).toHaveLength(1);
      expect(await projector.rebuilding()).toBe(false);

      // Given more of the log; when a process rebuilds by itself (the CLI), its log says nothing of it: the CLI reports it
      await events.append(projectId, [event('00000000000000de')], [], counts);
      lines.mockClear();
      const cli = await modules.create(ProjectorService);
      expect(await cli.rebuild()).toBeGreaterThan(0);
      expect(said()).toEqual([]);
    } finally {
      lines.mockRestore();
    }
  });

  // PGlite is one session: no transaction of another session holds the log's horizon back.
  it.skipIf(store === 'pglite')(
    'says the rebuild ended only once the log it began with is projected, not when a batch finds nothing yet',
    async () => {
      const projector = server.app.get(ProjectorService);
      await projector.settle();
      const lines = vi.spyOn(Logger.prototype, 'log');
      const ended = () => messagesOf(lines).filter((line) => /^read models rebuilt/.test(line));
      // Given an event the projector cannot read yet (a transaction begun before it still runs), and old rules
      await withLogHorizonHeld(server.databaseUrl!, async () => {
        await events.append(projectId, [event('00000000000000cc')], [], counts);
        await setCheckpointVersion(READ_MODELS_VERSION - 1);
        // When the projector rebuilds what it can read
        await projector.catchUp();
        // Then the rebuild is not said to have ended: the event is part of the log it began with
        expect(await projector.rebuilding()).toBe(true);
        expect(ended()).toEqual([]);
      });
      await projector.settle();
      expect(await projector.rebuilding()).toBe(false);
      expect(ended()).toHaveLength(1);
      lines.mockRestore();
    },
  );

  // PGlite is one session: no other projector can hold the lock.
  it.skipIf(store === 'pglite')(
    'says once that a newer Errata projects this database, also when that one holds the projector lock in between',
    async () => {
      const projector = server.app.get(ProjectorService);
      await projector.settle();
      const warnings = vi.spyOn(Logger.prototype, 'warn');
      const newer = () => messagesOf(warnings).filter((line) => /newer than this Errata/.test(line));
      const other = new Client({ connectionString: server.databaseUrl! });
      await other.connect();
      try {
        await setCheckpointVersion(READ_MODELS_VERSION + 1);
        await projector.catchUp();
        // The newer Errata's projector takes the lock for a while, then lets it go
        await other.query(`SELECT pg_advisory_lock(${PROJECTOR_LOCK})`);
        await projector.catchUp();
        await other.query(`SELECT pg_advisory_unlock(${PROJECTOR_LOCK})`);
        await projector.catchUp();
        expect(newer()).toHaveLength(1);
      } finally {
        warnings.mockRestore();
        await other.end();
        await setCheckpointVersion(READ_MODELS_VERSION);
      }
    },
  );

  // PGlite is one session: no second writer can move the checkpoint while a batch is in flight.
  it.skipIf(store === 'pglite')(
    'rolls back a batch whose checkpoint another writer moved meanwhile: read models untouched',
    async () => {
      const projector = server.app.get(ProjectorService);
      await projector.settle();
      await events.append(projectId, [event('00000000000000aa')], [], counts);
      // Readable before the batch starts: another test file's open transaction can hold the log's horizon below it
      // for a moment, and a batch that reads nothing never waits on the competitor's lock.
      const at = (await server.app.get(CheckpointRepository).get(server.db, READ_MODELS_PROJECTION))!
        .position;
      await until(
        'the event to be readable',
        async () => (await events.readAfter(server.db, at, 10)).length > 0,
      );
      const projectedAa = () =>
        server.db
          .selectFrom('agent_run')
          .select('span_id')
          .where('span_id', '=', Buffer.from('00000000000000aa', 'hex'))
          .execute();

      // A competing instance moves the checkpoint in a transaction that commits while our batch runs.
      const competitor = new Client({ connectionString: server.databaseUrl! });
      await competitor.connect();
      await competitor.query('BEGIN');
      const { rows } = await competitor.query<{ position: string }>(
        `UPDATE projection_checkpoint SET global_position = global_position + 1
          WHERE name = $1 RETURNING (global_position - 1)::text AS position`,
        [READ_MODELS_PROJECTION],
      );
      const batch = projector.projectBatch();
      const settled = batch.then(
        () => null,
        (error: Error) => error,
      );
      // Our compare-and-set now waits on the competitor's row lock... (a loaded machine can take seconds to get there)
      for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
        const waiting = await competitor.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        if (waiting.rows[0]!.n > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await competitor.query('COMMIT'); // ...and finds the checkpoint moved once it commits.
      expect((await settled)?.message).toMatch(/checkpoint moved/);
      expect(await projectedAa()).toHaveLength(0);

      await competitor.query(
        'UPDATE projection_checkpoint SET global_position = $2::bigint WHERE name = $1',
        [READ_MODELS_PROJECTION, rows[0]!.position],
      );
      await competitor.end();
      await projector.settle();
      expect(await projectedAa()).toHaveLength(1);
    },
    60_000,
  );
});
