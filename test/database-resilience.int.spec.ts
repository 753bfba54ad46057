/**
 * PostgreSQL ends idle connections on a restart, an admin command or a network cut. The pool must drop them
 * and carry on; an unhandled 'error' from the pool would end the whole Errata process (in this in-process
 * test, Vitest reports it as an unhandled error and the run fails).
 */
import { Client } from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/server';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('postgres');
});
afterAll(() => server?.close());

it('keeps serving after PostgreSQL terminates its idle connections', async () => {
  const ready = () => fetch(`${server.url}/readyz`).then((response) => response.status);
  expect(await ready()).toBe(200);
  const admin = new Client({ connectionString: server.databaseUrl! });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ terminated: number }>(
      `SELECT count(pg_terminate_backend(pid))::int AS terminated
         FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    expect(rows[0]!.terminated).toBeGreaterThan(0);
  } finally {
    await admin.end();
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(await ready()).toBe(200);
});
