/**
 * A record in the log the projector cannot apply (one an older Errata accepted, or a case no check foresaw) must not
 * stop the reports of every project: the projector narrows the failing batch down to it, sets it aside, and goes on.
 */
import { Logger } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointRepository } from '../apps/server/src/repositories/checkpoint.repository';
import { EventRepository } from '../apps/server/src/repositories/event.repository';
import { isRecordFailure, ProjectorService } from '../apps/server/src/services/projector.service';
import { agentRunEvent } from './support/agent-run-event';
import { defaultProjectId, startTestServer, type Store, type TestServer } from './support/server';

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
    const skipped = await server.app.get(CheckpointRepository).skipped(server.db);
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
    expect(await server.app.get(CheckpointRepository).skipped(server.db)).toHaveLength(1);
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
      withCode('ECONNREFUSED'),
    ])
      expect(isRecordFailure(error)).toBe(false);
  });
});
