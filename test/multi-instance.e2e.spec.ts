/**
 * Several Errata processes on one PostgreSQL database, as `docker compose up --scale errata=2` or a rolling restart
 * runs them: the built server, started as users start it.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Client } from 'pg';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { hashKey } from '../apps/server/src/services/api-key.service';
import { runCli } from './support/cli';
import { createTestDatabase, type TestDatabase } from './support/postgres';
import { spawnServer } from './support/server-process';
import { until } from './support/until';

const READ_KEY = 'replicas-read-key-0123456789';
let database: TestDatabase;
const started: ChildProcess[] = [];

beforeAll(async () => {
  database = await createTestDatabase(inject('templateDatabase'));
});
afterAll(async () => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
  await database?.drop();
});

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

async function withClient<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: database.url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

it('two instances started at once with a new ERRATA_INGEST_KEY both start, and the key is stored once', async () => {
  // Given a database with project `default` (made by an earlier start)
  await withClient((client) => client.query(`INSERT INTO project (name) VALUES ('default')`));
  // When the operator sets a new ERRATA_INGEST_KEY and two replicas start at once, both reaching the keys at the same
  // moment (the table held until both wait for it), however long the slower one takes to load (no statement timeout)
  const changed = {
    DATABASE_URL: database.url,
    ERRATA_INGEST_KEY: 'replicas-new-ingest-key-0123',
    ERRATA_READ_KEY: READ_KEY,
    ERRATA_PG_QUERY_TIMEOUT_MS: '0',
  };
  const replicas = await withClient(async (holder) => {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE api_key IN EXCLUSIVE MODE');
    const starting = Promise.allSettled([spawnServer(changed), spawnServer(changed)]);
    await until(
      'both replicas waiting at their keys',
      async () => {
        // pg_locks, not pg_stat_activity, which a transaction reads once
        const { rows } = await holder.query<{ n: number }>(
          `SELECT count(DISTINCT pid)::int AS n FROM pg_locks
            WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        );
        return rows[0]!.n === 2;
      },
      60_000,
    );
    await holder.query('COMMIT');
    return starting;
  });
  for (const replica of replicas) if (replica.status === 'fulfilled') started.push(replica.value.child);
  // Then both serve (neither stopped on the other's copy of the key), and the key is there once
  expect(
    replicas.map((replica) => (replica.status === 'rejected' ? String(replica.reason) : 'ready')),
  ).toEqual(['ready', 'ready']);
  const keys = await withClient((client) =>
    client.query('SELECT count(*)::int AS n FROM api_key WHERE key_hash = $1 AND revoked_at IS NULL', [
      hashKey(changed.ERRATA_INGEST_KEY),
    ]),
  );
  expect(keys.rows[0].n).toBe(1);
  for (const replica of replicas) if (replica.status === 'fulfilled') await stop(replica.value.child);
}, 120_000);

it('`projections rebuild` waits for a report reading the rollups, and never ends in a deadlock with it', async () => {
  // Given a report under way on a running server: its snapshot has read the findings' rollup, and reads the calls'
  // next (as a tool's findings and calls are read)
  await withClient(async (report) => {
    await report.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await report.query('SELECT count(*) FROM finding_rollup');
    // When `projections rebuild` begins meanwhile, and waits for the report to let go of what it read
    const rebuilding = runCli(database.url, 'projections', 'rebuild');
    await until(
      'the rebuild waiting for the report',
      async () => {
        const { rows } = await report.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks
            WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        );
        return rows[0]!.n > 0;
      },
      30_000,
    );
    // Then the report reads on (the rebuild does not hold a table the report waits for while it waits itself) …
    await report.query('SELECT count(*) FROM call_rollup');
    await report.query('COMMIT');
    // … and the rebuild ends, once the report has
    const rebuilt = await rebuilding;
    expect(rebuilt.stderr).not.toContain('deadlock');
    expect(rebuilt.code).toBe(0);
  });
}, 60_000);
