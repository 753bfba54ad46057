import { Client } from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ReadAdmission } from '../apps/server/src/services/read-admission';
import { startTestServer, type TestServer } from './support/server';
import { until } from './support/until';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer('postgres', { ERRATA_MAX_CONCURRENT_READS: '1' });
}, 60_000);

afterAll(async () => {
  await server?.close();
});

const read = (path: string) =>
  fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${server.readKey}` } });

it('with ERRATA_MAX_CONCURRENT_READS=1, a read waits while the first is answered, four may wait, the next is refused 503 + Retry-After at once; all are answered once the first is', async () => {
  const admission = server.app.get(ReadAdmission);
  // The first report waits on a lock held on the rollup it sums: in flight for as long as this test says, not for
  // as long as a slow query happens to take.
  const locker = new Client({ connectionString: server.databaseUrl!, options: '-c statement_timeout=0' });
  await locker.connect();
  let first: Promise<Response> | null = null;
  const queued: Promise<Response>[] = [];
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE call_rollup IN ACCESS EXCLUSIVE MODE');
    first = read('/api/v1/reports/retry-waste?groupBy=tool');
    await until('the first report to wait on the lock', async () => {
      const { rows } = await locker.query<{ waiting: string }>(
        `SELECT count(*)::text AS waiting FROM pg_locks WHERE NOT granted AND relation = 'call_rollup'::regclass`,
      );
      return admission.readsAdmitted === 1 && rows[0]!.waiting !== '0';
    });
    // Four reads wait for its place (a dashboard asks for several at once), holding no connection.
    for (const path of [
      '/api/v1/servers',
      '/api/v1/findings',
      '/api/v1/reports/escalations',
      '/api/v1/servers',
    ])
      queued.push(read(path));
    await until('four reads waiting', () => admission.readsWaiting === 4);
    for (const path of ['/api/v1/reports/retry-waste', '/api/v1/reports/misclassified-results']) {
      const refused = await read(path);
      expect(refused.status, path).toBe(503);
      expect(refused.headers.get('retry-after'), path).toBe('1');
      expect(await refused.json(), path).toMatchObject({
        statusCode: 503,
        message: expect.stringContaining('ERRATA_MAX_CONCURRENT_READS'),
      });
    }
    expect(admission.readsAdmitted).toBe(1);
    // Health does not take a read's place.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  } finally {
    await locker.query('COMMIT').catch(() => undefined);
    await locker.end();
  }
  expect((await first!).status).toBe(200);
  expect((await Promise.all(queued)).map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
  expect(admission.readsAdmitted).toBe(0);
  expect(admission.readsWaiting).toBe(0);
  // Places are given back after a refused parameter too.
  expect((await read('/api/v1/reports/retry-waste?groupBy=nope')).status).toBe(400);
  expect((await read('/api/v1/reports/retry-waste?groupBy=nope')).status).toBe(400);
  expect((await read('/api/v1/servers')).status).toBe(200);
  expect(admission.readsAdmitted).toBe(0);
}, 60_000);
