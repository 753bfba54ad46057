/**
 * A record in the log the projector cannot apply (one an older Errata accepted, or a case no check foresaw) must not
 * stop the reports of every project: the projector narrows the failing batch down to it, sets it aside, and goes on.
 */
import { Logger } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointRepository } from '../apps/server/src/repositories/checkpoint.repository';
import { EventRepository } from '../apps/server/src/repositories/event.repository';
import {
  isRecordFailure,
  ProjectorService,
  READ_MODELS_VERSION,
} from '../apps/server/src/services/projector.service';
import { until } from './support/until';
import { agentRunEvent } from './support/agent-run-event';
import {
  defaultProjectId,
  setAsideRecords,
  startTestServer,
  type Store,
  type TestServer,
} from './support/server';

/** A run whose start time is no number: projecting it throws, every time. */
function poisonEvent(spanId: string) {
  const event = agentRunEvent(spanId);
  return { ...event, data: { ...event.data, span: { ...event.data.span, startTimeUnixNano: 'soon' } } };
}

describe.each(['postgres', 'pglite'] as Store[])('a record the projector cannot apply, on %s', (store) => {
  let server: TestServer;
  let projectId: number;
  const logged: string[] = [];
  beforeAll(async () => {
    // The background projector runs only at start: the test decides when batches are projected.
    server = await startTestServer(store, { ERRATA_PROJECTION_POLL_MS: '600000' });
    projectId = await defaultProjectId(server.db);
    const errors = (message: unknown) => void logged.push(String(message));
    Logger.overrideLogger({ log() {}, warn() {}, error: errors, debug() {}, verbose() {}, fatal() {} });
  }, 120_000);
  afterAll(async () => {
    Logger.overrideLogger(['warn', 'error']);
    await server?.close();
  });

  const runNames = async () =>
    (await server.db.selectFrom('agent_run').select('span_id').execute()).map((row) =>
      Buffer.from(row.span_id as unknown as Uint8Array).toString('hex'),
    );

  it('is set aside, recorded and logged; the records around it are projected', async () => {
    // Given a poison event between good ones, in one request
    const events = [
      agentRunEvent('0000000000000a01'),
      poisonEvent('0000000000000a02'),
      agentRunEvent('0000000000000a03'),
    ];
    await server.app
      .get(EventRepository)
      .append(projectId, events, [], { received: 3, dropped: 0, rejected: 0 });

    // When the projector catches up
    await server.catchUp();

    // Then the good ones are in the read models, the poison one is set aside and said so
    expect((await runNames()).sort()).toEqual(['0000000000000a01', '0000000000000a03']);
    const skipped = await setAsideRecords(server.db);
    expect(skipped).toMatchObject([
      { projection: 'read-models', projectId, error: expect.stringMatching(/soon/) },
    ]);
    expect(
      logged.some((line) => /set aside the event .* \(project \d+\), which fails to project/.test(line)),
    ).toBe(true);
    // And readiness says how many records are set aside
    const readiness = (await (await fetch(`${server.url}/readyz`)).json()) as { setAsideRecords: number };
    expect(readiness).toMatchObject({ ready: true, setAsideRecords: 1 });
  });

  it('is tried again by a rebuild, and set aside again while it still fails', async () => {
    await server.app.get(ProjectorService).rebuild();
    expect((await runNames()).sort()).toEqual(['0000000000000a01', '0000000000000a03']);
    expect(await setAsideRecords(server.db)).toHaveLength(1);
  });

  const append = (events: ReturnType<typeof agentRunEvent>[]) =>
    server.app
      .get(EventRepository)
      .append(projectId, events, [], { received: events.length, dropped: 0, rejected: 0 });
  const skippedCount = async () => (await setAsideRecords(server.db)).length;

  it('is set aside only from the checkpoint it failed at: after another projector moved on, nothing is', async () => {
    const checkpoints = server.app.get(CheckpointRepository);
    const at = (await checkpoints.get(server.db, 'read-models'))!.position;
    // Given the next record read at that checkpoint, then the checkpoint moved past it (another projector), and a
    // record after it
    await append([agentRunEvent('0000000000000a04')]);
    // Readable once no transaction on the PostgreSQL server (another test file's) holds the log's horizon below it
    const next = await until('the record to be readable', async () =>
      (await server.app.get(EventRepository).readAfter(server.db, at, 1)).at(0),
    );
    await server.catchUp();
    await append([agentRunEvent('0000000000000a05')]);
    // When this projector would set the record it read aside
    const projector = server.app.get(ProjectorService) as unknown as {
      setAside(projection: string, at: unknown, record: unknown, cause: unknown): Promise<number>;
    };
    // Then nothing is set aside, not the record now next either
    expect(await projector.setAside('read-models', at, next, new SyntaxError('late'))).toBe(0);
    await server.catchUp();
    expect(await skippedCount()).toBe(1);
    expect(await runNames()).toEqual(expect.arrayContaining(['0000000000000a04', '0000000000000a05']));
  });

  it('is set aside again by the rebuild a rules version change starts, the records around it projected', async () => {
    // Given a checkpoint of an older rules version (an upgrade), with the set-aside record first in the log
    await server.db
      .updateTable('projection_checkpoint')
      .set((eb) => ({ version: eb('version', '-', 1) }))
      .execute();
    // When the projector catches up
    await server.catchUp();
    // Then it rebuilt everything, set the record aside again, and its checkpoints are of this version
    expect((await runNames()).sort()).toEqual([
      '0000000000000a01',
      '0000000000000a03',
      '0000000000000a04',
      '0000000000000a05',
    ]);
    expect(await skippedCount()).toBe(1);
    const versions = await server.db.selectFrom('projection_checkpoint').select('version').execute();
    expect(versions.map((row) => row.version)).toEqual([READ_MODELS_VERSION, READ_MODELS_VERSION]);
  });

  it('sets aside more than 100 records mixed with good ones (as a rebuild replays them), all of them', async () => {
    const events = Array.from({ length: 110 }, (_, i) => [
      agentRunEvent(`00000000000b${String(i).padStart(4, '0')}`),
      poisonEvent(`00000000000c${String(i).padStart(4, '0')}`),
    ]).flat();
    await append(events);
    await server.catchUp();
    expect(await skippedCount()).toBe(111);
  });

  it('stops setting aside when the 100 records before the failing one were all set aside, and retries instead', async () => {
    // Given a good record, then 101 records in a row that all fail (Errata's own fault more likely than theirs)
    await append([
      agentRunEvent('00000000000e0000'),
      ...Array.from({ length: 101 }, (_, i) => poisonEvent(`00000000000d${String(i).padStart(4, '0')}`)),
    ]);
    // (readable first: another test file's open transaction may hold the log's horizon below them for a moment)
    const at = (await server.app.get(CheckpointRepository).get(server.db, 'read-models'))!.position;
    await until(
      'the records to be readable',
      async () => (await server.app.get(EventRepository).readAfter(server.db, at, 200)).length === 102,
    );
    // Then the projector sets 100 aside, and reports the failure of the 101st, to try it again
    await expect(server.app.get(ProjectorService).catchUp()).rejects.toThrow(/soon/);
    expect(await skippedCount()).toBe(211);
    expect(logged.some((line) => /the 100 records before this one were all set aside/.test(line))).toBe(true);
  }, 120_000);
});

describe('a record the projector cannot apply, first in the log, after a rules version change', () => {
  it('is set aside again: the rebuild starts in a transaction of its own, not in the batch that fails', async () => {
    const server = await startTestServer('postgres', { ERRATA_PROJECTION_POLL_MS: '600000' });
    try {
      const projectId = await defaultProjectId(server.db);
      await server.app
        .get(EventRepository)
        .append(projectId, [poisonEvent('0000000000000f01'), agentRunEvent('0000000000000f02')], [], {
          received: 2,
          dropped: 0,
          rejected: 0,
        });
      await server.catchUp();
      // Given checkpoints of an older rules version (an upgrade)
      await server.db
        .updateTable('projection_checkpoint')
        .set((eb) => ({ version: eb('version', '-', 1) }))
        .execute();
      // When the projector catches up, then the good record is projected again, the bad one set aside again
      await server.catchUp();
      const runs = await server.db.selectFrom('agent_run').select('span_id').execute();
      expect(runs).toHaveLength(1);
      expect(await setAsideRecords(server.db)).toHaveLength(1);
      const versions = await server.db.selectFrom('projection_checkpoint').select('version').execute();
      expect(versions.map((row) => row.version)).toEqual([READ_MODELS_VERSION, READ_MODELS_VERSION]);
    } finally {
      await server.close();
    }
  });
});

describe('which failures set a record aside', () => {
  it('those the records cause; not the database being away or busy', () => {
    const withCode = (code: string) => Object.assign(new Error(code), { code });
    for (const error of [
      new SyntaxError('Cannot convert soon to a BigInt'),
      withCode('22023'),
      withCode('54000'),
    ])
      expect(isRecordFailure(error)).toBe(true);
    for (const error of [
      withCode('08006'),
      withCode('40001'),
      withCode('57014'),
      withCode('53100'),
      withCode('25P03'),
      withCode('42703'),
      withCode('ECONNREFUSED'),
      // pg's client errors after a dropped connection carry no code
      new Error('Client has encountered a connection error and is not queryable'),
      new Error('Client was closed and is not queryable'),
      new Error('Query read timeout'),
      new Error('something else entirely'),
    ])
      expect(isRecordFailure(error), error.message).toBe(false);
  });
});
