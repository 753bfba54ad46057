/** `/readyz` says how far the reports are behind the event log, so an operator can tell a stalled projector. */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventRepository } from '../apps/server/src/repositories/event.repository';
import { ProjectorService } from '../apps/server/src/services/projector.service';
import { agentRunEvent } from './support/agent-run-event';
import { defaultProjectId, startTestServer, type Store, type TestServer } from './support/server';

describe.each(['postgres', 'pglite'] as Store[])('the projection lag /readyz reports, on %s', (store) => {
  let server: TestServer;
  beforeAll(async () => {
    // The background projector runs only at start: the test decides when the events are projected.
    server = await startTestServer(store, { ERRATA_PROJECTION_POLL_MS: '600000' });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  const readiness = async () =>
    (await (await fetch(`${server.url}/readyz`)).json()) as {
      ready: boolean;
      projectionLagSeconds: number;
      rebuilding: boolean;
    };

  it('is 0 when the reports include every event', async () => {
    await server.catchUp();
    expect(await readiness()).toMatchObject({ ready: true, projectionLagSeconds: 0 });
  });

  it('is the age of the first event the reports do not include yet, and 0 again once it is projected', async () => {
    // Given two events the projector has not read, received 90 and 30 seconds ago
    const projectId = await defaultProjectId(server.db);
    await server.app
      .get(EventRepository)
      .append(projectId, [agentRunEvent('0000000000000b01'), agentRunEvent('0000000000000b02')], [], {
        received: 2,
        dropped: 0,
        rejected: 0,
      });
    await sql`UPDATE event SET received_at = now() - interval '90 seconds' WHERE span_id = '\\x0000000000000b01'`.execute(
      server.db,
    );
    await sql`UPDATE event SET received_at = now() - interval '30 seconds' WHERE span_id = '\\x0000000000000b02'`.execute(
      server.db,
    );

    // Then the reports are 90 seconds behind, and still ready: they answer, only late
    const behind = await readiness();
    expect(behind.ready).toBe(true);
    expect(behind.projectionLagSeconds).toBeGreaterThanOrEqual(90);
    expect(behind.projectionLagSeconds).toBeLessThan(120);

    // When the projector catches up, they are not behind any more
    await server.catchUp();
    expect((await readiness()).projectionLagSeconds).toBe(0);
  });

  it('says a rebuild is under way until the log it began with is projected; events received since are only lag', async () => {
    await server.catchUp();
    expect(await readiness()).toMatchObject({ rebuilding: false });
    // When a rebuild begins (nothing projected yet: the background projector waits for its next poll)
    await server.app.get(ProjectorService).beginRebuild();
    expect(await readiness()).toMatchObject({ ready: true, rebuilding: true });
    // Then it is done once the projector caught up, though an event received after it began waits
    await server.catchUp();
    const projectId = await defaultProjectId(server.db);
    await server.app
      .get(EventRepository)
      .append(projectId, [agentRunEvent('0000000000000c01')], [], { received: 1, dropped: 0, rejected: 0 });
    expect(await readiness()).toMatchObject({ rebuilding: false });
    await server.catchUp();
  });

  it('says a rebuild is under way as soon as the checkpoints are of older rules, before it has begun', async () => {
    await server.catchUp();
    // Given checkpoints an older Errata wrote (the first start after an upgrade, before the projector's first pass)
    await server.db
      .updateTable('projection_checkpoint')
      .set((eb) => ({ version: eb('version', '-', 1) }))
      .execute();
    expect(await readiness()).toMatchObject({ rebuilding: true });
    // Then, once the projector has rebuilt, not any more
    await server.catchUp();
    expect(await readiness()).toMatchObject({ rebuilding: false });
  });

  it('is where a newer Errata projecting this database stands, not the whole log, on an older one', async () => {
    // Given checkpoints of newer rules, caught up with the log (this older Errata leaves projecting to that one)
    await server.db
      .updateTable('projection_checkpoint')
      .set((eb) => ({ version: eb('version', '+', 1) }))
      .execute();
    try {
      expect((await readiness()).projectionLagSeconds).toBe(0);
    } finally {
      await server.db
        .updateTable('projection_checkpoint')
        .set((eb) => ({ version: eb('version', '-', 1) }))
        .execute();
    }
  });
});
