/**
 * PostgreSQL ends connections on a restart, an admin command, a failover or a network cut. The pool must drop them
 * and carry on; an unhandled 'error' from the pool or from a connection in use would end the whole Errata process
 * (in this in-process test, Vitest reports it as an unhandled error and the run fails).
 */
import { Client } from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AgentTrace } from './support/agent-spans';
import { sendSpans, startTestServer, type TestServer } from './support/server';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('postgres');
});
afterAll(() => server?.close());

const ready = () => fetch(`${server.url}/readyz`).then((response) => response.status);

/** Ends every other connection to the test database; returns how many it ended. */
async function terminateConnections(): Promise<number> {
  const admin = new Client({ connectionString: server.databaseUrl! });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ terminated: number }>(
      `SELECT count(pg_terminate_backend(pid))::int AS terminated
         FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    return rows[0]!.terminated;
  } finally {
    await admin.end();
  }
}

it('keeps serving after PostgreSQL terminates its idle connections', async () => {
  expect(await ready()).toBe(200);
  expect(await terminateConnections()).toBeGreaterThan(0);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(await ready()).toBe(200);
});

it('keeps serving when PostgreSQL terminates connections in use: ingest, projection and reads', async () => {
  const trace = new AgentTrace();
  const t0 = Date.now() - 60_000;
  const batch = (i: number) =>
    trace.run(`agent-${i}`, t0 + i, [
      { tool: 'lookup', startMs: t0 + i, durationMs: 2, isError: i % 3 === 0, category: 'transient' },
      { tool: 'lookup', startMs: t0 + i + 5, durationMs: 2 },
    ]);
  const statuses: number[] = [];
  let sending = true;
  const senders = [0, 1, 2, 3].map(async (lane) => {
    for (let i = lane; sending; i += 4) {
      statuses.push(await sendSpans(server.url, server.ingestKey, batch(i)).catch(() => 0));
    }
  });
  let terminated = 0;
  for (let round = 0; round < 8; round++) {
    await new Promise((resolve) => setTimeout(resolve, 150));
    terminated += await terminateConnections();
  }
  sending = false;
  await Promise.all(senders);
  await trace.shutdown();
  expect(terminated).toBeGreaterThan(8);
  // Refused while a connection was lost (503, to be retried), never a 500; and the server is still there.
  expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([]);
  expect(statuses.filter((status) => status === 200).length).toBeGreaterThan(0);
  expect(await ready()).toBe(200);
  expect(await sendSpans(server.url, server.ingestKey, batch(100_000))).toBe(200);
  await server.catchUp();
}, 60_000);
