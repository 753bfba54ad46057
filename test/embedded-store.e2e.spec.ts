/**
 * The embedded PGlite store. It runs in Errata's own process: a long catch-up (the rebuild after an upgrade, a
 * backlog at start) must leave the event loop turns to answer HTTP and handle signals between its batches. Its
 * files are written open to everyone: its directory must not be.
 */
import { chmod, mkdtemp, rm, stat } from 'node:fs/promises';
import type { Server, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CallerGoneError } from '../apps/server/src/database/abandoned-reads';
import { EventRepository } from '../apps/server/src/repositories/event.repository';
import { RollupQueryRepository } from '../apps/server/src/repositories/rollup-query.repository';
import { ProjectorService } from '../apps/server/src/services/projector.service';
import { ReadAdmission } from '../apps/server/src/services/read-admission';
import { agentRunEvent } from './support/agent-run-event';
import { seedEmbeddedStore } from './support/embedded-store';
import { defaultProjectId, startTestServer, type TestServer } from './support/server';
import { until } from './support/until';

const BACKLOG = 12_000; // six batches of the projector's 2,000

let server: TestServer;
let dataDir: string;
beforeAll(async () => {
  // A store an earlier version created, its directory open to every local user
  dataDir = await mkdtemp(join(tmpdir(), 'errata-embedded-'));
  await seedEmbeddedStore(dataDir);
  await chmod(join(dataDir, 'pgdata'), 0o755);
  // The background projector runs at start only; the backlog is appended straight to the log after it.
  server = await startTestServer('pglite', { ERRATA_PROJECTION_POLL_MS: '600000', ERRATA_DATA_DIR: dataDir });
  await server.catchUp();
  const projectId = await defaultProjectId(server.db);
  const events = server.app.get(EventRepository);
  for (let at = 0; at < BACKLOG; at += 2_000) {
    const chunk = Array.from({ length: 2_000 }, (_, i) =>
      agentRunEvent((at + i + 1).toString(16).padStart(16, '0')),
    );
    await events.append(projectId, chunk, [], { received: chunk.length, dropped: 0, rejected: 0 });
  }
}, 120_000);
afterAll(async () => {
  await server?.close();
  await rm(dataDir, { recursive: true, force: true });
});

const projectedRuns = async () =>
  Number(
    (
      await server.db
        .selectFrom('agent_run')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

it('answers HTTP while the background projector catches up with a backlog, not only after it', async () => {
  // When the background projector starts on the backlog
  server.app.get(ProjectorService).wake();
  // Then a request is answered before the backlog is all projected
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  expect(await projectedRuns()).toBeLessThan(BACKLOG);
  // And the projector still gets through all of it
  await server.catchUp();
  expect(await projectedRuns()).toBe(BACKLOG);
}, 120_000);

it('answers a request that reads the store between two batches of a catch-up, not once it is over', async () => {
  // Given another backlog the background projector starts on
  const projectId = await defaultProjectId(server.db);
  const events = server.app.get(EventRepository);
  for (let at = BACKLOG; at < 2 * BACKLOG; at += 2_000) {
    const chunk = Array.from({ length: 2_000 }, (_, i) =>
      agentRunEvent((at + i + 1).toString(16).padStart(16, '0')),
    );
    await events.append(projectId, chunk, [], { received: chunk.length, dropped: 0, rejected: 0 });
  }
  server.app.get(ProjectorService).wake();
  // When /readyz runs its statements (the store has one connection, which each batch holds)
  const readiness = (await (await fetch(`${server.url}/readyz`)).json()) as { projectionLagSeconds: number };
  // Then it is answered while the backlog is still being projected: the projector waited for it
  expect(await projectedRuns()).toBeLessThan(2 * BACKLOG);
  expect(readiness.projectionLagSeconds).not.toBeNull();
  await server.catchUp();
  expect(await projectedRuns()).toBe(2 * BACKLOG);
}, 120_000);

it('keeps its data directory to its own user (0700), also one an earlier version created open', async () => {
  expect((await stat(join(dataDir, 'pgdata'))).mode & 0o777).toBe(0o700);
});

it('a read whose client disconnects runs no further statement (PGlite cannot cancel one): its place is freed, nothing logged, and the next read is answered', async () => {
  const logged: string[] = [];
  const log = (message: unknown) => void logged.push(String(message));
  Logger.overrideLogger({ log() {}, warn: log, error: log, debug() {}, verbose() {}, fatal() {} });
  const places = server.app.get(ReadAdmission);
  const repository = server.app.get(RollupQueryRepository) as unknown as Record<string, unknown>;
  const original = repository.callSums as (...args: unknown[]) => Promise<unknown>;
  // The report stops between its two reads until the test lets it go on: its client leaves meanwhile.
  let goOn!: () => void;
  const gone = new Promise<void>((resolve) => (goOn = resolve));
  let between = false;
  let stopped: unknown = null;
  repository.callSums = async function (this: unknown, ...args: unknown[]) {
    between = true;
    await gone;
    return original.apply(this, args).catch((error: unknown) => {
      stopped = error;
      throw error;
    });
  };
  // The response of the next request, closed once the server sees its client gone.
  const http = server.app.getHttpServer() as Server;
  const responseClosed = new Promise<void>((resolve) =>
    http.once('request', (_request, response: ServerResponse) => response.once('close', resolve)),
  );
  try {
    const client = new AbortController();
    const abandoned = fetch(`${server.url}/api/v1/reports/subagent-coverage`, {
      headers: { authorization: `Bearer ${server.readKey}` },
      signal: client.signal,
    }).catch((error: Error) => error);
    await until('the report to be between its reads', () => between);
    client.abort();
    expect(await abandoned).toMatchObject({ name: 'AbortError' });
    await responseClosed;
    goOn();
    await until('the place to be given back', () => places.readsAdmitted === 0, 5_000);
    expect(stopped).toBeInstanceOf(CallerGoneError);
    delete repository.callSums;
    const next = await fetch(`${server.url}/api/v1/reports/subagent-coverage`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(next.status).toBe(200);
  } finally {
    goOn();
    delete repository.callSums;
    Logger.overrideLogger(['warn', 'error']);
  }
  expect(logged).toEqual([]);
}, 30_000);
