/**
 * Several Errata processes on one PostgreSQL database, as `docker compose up --scale errata=2` or a rolling restart
 * runs them: the built server, started as users start it.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Client } from 'pg';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { hashKey } from '../apps/server/src/services/api-key.service';
import { PROJECTIONS } from '../apps/server/src/projections/projection-logs';
import { PROJECTOR_LOCK } from '../apps/server/src/services/projector.service';
import { AgentTrace } from './support/agent-spans';
import { runCli } from './support/cli';
import { generatedCorpus } from './support/generated-corpus';
import { createTestDatabase, type TestDatabase } from './support/postgres';
import { sendSpans } from './support/server';
import { spawnServer } from './support/server-process';
import { until } from './support/until';
import { Receiver } from './support/webhook-receiver';

const READ_KEY = 'replicas-read-key-0123456789';
const INGEST_KEY = 'replicas-new-ingest-key-0123';
let database: TestDatabase;
const started: ChildProcess[] = [];
/** The two replicas the first test starts, serving the later ones. */
let replicas: { child: ChildProcess; url: string }[] = [];

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
    ERRATA_INGEST_KEY: INGEST_KEY,
    ERRATA_READ_KEY: READ_KEY,
    ERRATA_PG_QUERY_TIMEOUT_MS: '0',
    // and, for the webhooks test, fix rounds and deliveries every moment, to the test's own receiver
    ERRATA_FIX_INTERVAL_MS: '200',
    ERRATA_DELIVERY_POLL_MS: '25',
    ERRATA_WEBHOOK_ALLOW_INTERNAL: 'true',
  };
  const starts = await withClient(async (holder) => {
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
  for (const start of starts) if (start.status === 'fulfilled') started.push(start.value.child);
  // Then both serve (neither stopped on the other's copy of the key), and the key is there once
  expect(starts.map((start) => (start.status === 'rejected' ? String(start.reason) : 'ready'))).toEqual([
    'ready',
    'ready',
  ]);
  const keys = await withClient((client) =>
    client.query('SELECT count(*)::int AS n FROM api_key WHERE key_hash = $1 AND revoked_at IS NULL', [
      hashKey(changed.ERRATA_INGEST_KEY),
    ]),
  );
  expect(keys.rows[0].n).toBe(1);
  replicas = starts.flatMap((start) => (start.status === 'fulfilled' ? [start.value] : []));
}, 120_000);

/** Sends as an exporter does: again after a 503 (the replica's ingest places all taken) or a dropped connection. */
async function export_(url: string, spans: ReadableSpan[]): Promise<void> {
  for (;;) {
    const status = await sendSpans(url, INGEST_KEY, spans).catch(() => 503);
    if (status === 200) return;
    expect(status).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether every event and span edge committed so far is projected, by whichever replica. */
async function projected(): Promise<boolean> {
  const { rows } = await withClient((client) =>
    client.query<{ done: boolean }>(`
      SELECT ${PROJECTIONS.map(
        ([name, table]) => `coalesce(
          (SELECT (transaction_id, global_position) FROM projection_checkpoint WHERE name = '${name}')
          >= (SELECT (transaction_id, global_position) FROM ${table} ORDER BY 1 DESC LIMIT 1), true)`,
      ).join(' AND ')} AS done`),
  );
  return rows[0]!.done;
}

const REPORTS = [
  'reports/retry-waste?groupBy=category',
  'reports/retry-waste?groupBy=tool',
  'reports/escalations',
  'reports/misclassified-results',
  'reports/subagent-coverage',
  'findings',
  'servers',
  'names',
];

async function reports(url: string, readKey: string): Promise<string[]> {
  return Promise.all(
    REPORTS.map(async (path) => {
      const response = await fetch(`${url}/api/v1/${path}`, {
        headers: { authorization: `Bearer ${readKey}` },
      });
      return `${path} ${response.status} ${await response.text()}`;
    }),
  );
}

/** Turns of a chat runtime, a trace each: the second retries (`errata.retry.of`) a call that failed in the first. */
function hintedRetries(count: number): ReadableSpan[] {
  const denied = {
    tool: 'refund',
    durationMs: 40,
    isError: true,
    category: 'business',
    text: 'Refund denied',
  };
  return Array.from({ length: count }, (_, i) => {
    const at = Date.UTC(2026, 10, 30, 11) + i * 120_000;
    const first = new AgentTrace().run('chat', at, [{ ...denied, startMs: at }]);
    const failed = first.find((span) => span.name === 'tools/call refund')!.spanContext().spanId;
    const extra = { 'errata.retry.of': failed };
    return [
      ...first,
      ...new AgentTrace().run('chat', at + 60_000, [{ ...denied, startMs: at + 60_000, extra }]),
    ];
  }).flat();
}

it('spans of one trace sent to both replicas at once, some twice, give the reports of one request to one', async () => {
  // Given a project whose spans come in one request to one replica
  const reference = await withClient(async (client) => {
    const { rows } = await client.query<{ id: number }>(
      `INSERT INTO project (name) VALUES ('reference') RETURNING id`,
    );
    const keys = { ingest: 'reference-ingest-key-0123456789', read: 'reference-read-key-0123456789' };
    for (const [scope, key] of Object.entries(keys))
      await client.query(
        `INSERT INTO api_key (project_id, scope, key_hash, key_prefix, managed_by) VALUES ($1, $2, $3, 'test', 'cli')`,
        [rows[0]!.id, scope, hashKey(key)],
      );
    return keys;
  });
  const spans = [...generatedCorpus({ traces: 30, seed: 5 }), ...hintedRetries(4)];
  expect(await sendSpans(replicas[0]!.url, reference.ingest, spans)).toBe(200);
  // When `default` gets them shuffled (children before their parents, a retry before the call it retries), in small
  // requests to either replica in turn, four at a time, a quarter of them sent again to the other
  let seed = 11;
  const random = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648), seed % n);
  const shuffled = spans
    .map((span) => ({ span, key: random(1_000_000) }))
    .sort((a, b) => a.key - b.key)
    .map(({ span }) => span);
  const requests: [string, ReadableSpan[]][] = [];
  for (let at = 0, i = 0; at < shuffled.length; i++) {
    const batch = shuffled.slice(at, (at += 1 + random(6)));
    requests.push([replicas[i % 2]!.url, batch]);
    if (random(4) === 0) requests.push([replicas[(i + 1) % 2]!.url, batch]);
  }
  await Promise.all(
    [0, 1, 2, 3].map(async (lane) => {
      for (let i = lane; i < requests.length; i += 4) await export_(...requests[i]!);
    }),
  );
  // Then once projected (by both replicas, batch by batch), every report of either replica is the reference's
  await until('the replicas projecting everything', projected, 60_000);
  const expected = await reports(replicas[0]!.url, reference.read);
  expect(expected.join('\n')).toContain('"retries":');
  for (const replica of replicas) expect(await reports(replica.url, READ_KEY)).toEqual(expected);
  const { rows } = await withClient((client) =>
    client.query('SELECT count(*)::int AS n FROM projection_skip'),
  );
  expect(rows[0].n).toBe(0);
}, 120_000);

it('both replicas run fix rounds and send webhooks: each fix is suggested once, each message sent once', async () => {
  // Given the findings of the traces above, and an admin key
  const admin = 'replicas-admin-key-0123456789';
  await withClient((client) =>
    client.query(
      `INSERT INTO api_key (project_id, scope, key_hash, key_prefix, managed_by)
       SELECT id, 'admin', $1, 'test', 'cli' FROM project WHERE name = 'default'`,
      [hashKey(admin)],
    ),
  );
  const { findings } = (await (
    await fetch(`${replicas[0]!.url}/api/v1/findings`, { headers: { authorization: `Bearer ${admin}` } })
  ).json()) as { findings: { server: string | null }[] };
  const servers = [...new Set(findings.flatMap(({ server }) => (server === null ? [] : [server])))];
  expect(servers.length).toBeGreaterThan(0);
  // When their servers get an owner, one through each replica, while both run fix rounds and deliveries
  const receiver = new Receiver();
  const webhookUrl = await receiver.start();
  for (const [i, server] of servers.entries()) {
    const response = await fetch(`${replicas[i % 2]!.url}/api/v1/owners`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ server, webhookUrl }),
    });
    expect(response.status).toBe(201);
  }
  // Then every owned finding gets one FixSuggested and one message, delivered once
  const owned = findings.filter(({ server }) => server !== null).length;
  await until('every message delivered', async () => {
    const { rows } = await withClient((client) =>
      client.query(`SELECT count(*)::int AS n FROM webhook_delivery WHERE status = 'delivered'`),
    );
    return rows[0].n === owned;
  });
  await new Promise((resolve) => setTimeout(resolve, 1_000)); // a few more rounds and polls of both
  const ids = receiver.received.map((request) => request.headers['webhook-id']);
  expect(ids).toHaveLength(owned);
  expect(new Set(ids).size).toBe(owned);
  const { rows } = await withClient((client) =>
    client.query(`SELECT type, count(*)::int AS n FROM fix_event GROUP BY type ORDER BY type`),
  );
  expect(rows).toEqual([
    { type: 'FixDelivered', n: owned },
    { type: 'FixSuggested', n: owned },
  ]);
  await receiver.close();
}, 60_000);

it('a replica killed while it projects leaves its batch to the other, which projects it at once', async () => {
  // Given a backlog sent to one replica, which begins projecting it
  const [doomed, survivor] = replicas;
  const spans = generatedCorpus({ traces: 250, seed: 9, startMs: Date.UTC(2026, 10, 29) });
  for (let at = 0; at < spans.length; at += 500) await export_(doomed!.url, spans.slice(at, at + 500));
  await until('the first replica projecting', async () => {
    const { rows } = await withClient((client) =>
      client.query<{ holder: string | null }>(`
        SELECT a.application_name AS holder FROM pg_locks l JOIN pg_stat_activity a USING (pid)
         WHERE l.locktype = 'advisory' AND l.granted AND l.objid = ${PROJECTOR_LOCK}`),
    );
    return rows.length > 0;
  });
  // When it is killed mid-batch (its transaction rolled back as its connections close)
  doomed!.child.kill('SIGKILL');
  await once(doomed!.child, 'exit');
  const killedAt = Date.now();
  // Then the other replica projects everything, within a few of its polls, and says so in /readyz
  await until('the other replica projecting everything', projected, 30_000);
  console.info(`projected by the surviving replica ${Date.now() - killedAt} ms after the kill`);
  const readiness = await (await fetch(`${survivor!.url}/readyz`)).json();
  expect(readiness).toMatchObject({ ready: true, projectionLagSeconds: 0, setAsideRecords: 0 });
  // and every call of the log is in the read models once
  const { rows } = await withClient((client) =>
    client.query(`SELECT (SELECT count(*)::int FROM event WHERE type = 'ToolCallObserved') AS logged,
                         (SELECT count(*)::int FROM tool_call) AS projected`),
  );
  expect(rows[0].projected).toBe(rows[0].logged);
  await stop(survivor!.child);
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
