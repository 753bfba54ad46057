/**
 * PostgreSQL ends connections on a restart, an admin command, a failover or a network cut. The pool must drop them
 * and carry on; an unhandled 'error' from the pool or from a connection in use would end the whole Errata process
 * (in this in-process test, Vitest reports it as an unhandled error and the run fails). A statement that runs past
 * ERRATA_PG_QUERY_TIMEOUT_MS is canceled by PostgreSQL itself, and its connection goes on serving.
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { sql } from 'kysely';
import { Client } from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase } from '../apps/server/src/database/database';
import { AgentTrace } from './support/agent-spans';
import { sendSpans, setAsideRecords, startTestServer, type TestServer } from './support/server';
import { withConnectionsRefused } from './support/postgres';
import { until } from './support/until';

/** Short, so that a statement waiting on a lock held here is cut off within the test. */
const QUERY_TIMEOUT_MS = 1_000;
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('postgres', { ERRATA_PG_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS) });
});
afterAll(() => server?.close());

const ready = () => fetch(`${server.url}/readyz`).then((response) => response.status);

/** Ends every other connection to the test database; returns how many it ended. */
async function terminateConnections(): Promise<number> {
  // Its own statements never time out, whatever the database's setting.
  const admin = new Client({ connectionString: server.databaseUrl!, options: '-c statement_timeout=0' });
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
  // Ready again once the pool has dropped the connections PostgreSQL ended (a check right after the last round may
  // still meet one), and ingest goes on.
  await until('readiness', async () => (await ready()) === 200);
  await until(
    'an ingest answered 200',
    async () => (await sendSpans(server.url, server.ingestKey, batch(100_000))) === 200,
  );
  await server.catchUp();
}, 60_000);

it('has PostgreSQL cancel a statement past ERRATA_PG_QUERY_TIMEOUT_MS (57014), and serves the next one on the same connection', async () => {
  const database = openDatabase({
    databaseUrl: server.databaseUrl!,
    dataDir: '',
    poolSize: 1,
    queryTimeoutMs: QUERY_TIMEOUT_MS,
  });
  const locker = new Client({ connectionString: server.databaseUrl!, options: '-c statement_timeout=0' });
  await locker.connect();
  try {
    const backend = async () =>
      (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(database.db)).rows[0]!.pid;
    const pid = await backend();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE project IN ACCESS EXCLUSIVE MODE');
    const projects = () => database.db.selectFrom('project').select('name').execute();
    const error = await projects().then(
      () => null,
      (failure: unknown) => failure,
    );
    // PostgreSQL's own cancel, not pg's 'Query read timeout' a moment later (which closes the connection)
    expect(error).toMatchObject({ code: '57014' });
    // and PostgreSQL no longer runs it: with a client-side timeout alone, it went on waiting for the lock.
    expect(await adminQuery('SELECT state FROM pg_stat_activity WHERE pid = $1', [pid])).toEqual([
      { state: 'idle' },
    ]);
    await locker.query('ROLLBACK');
    expect((await projects()).map((project) => project.name)).toContain('default');
    expect(await backend()).toBe(pid);
  } finally {
    await locker.query('ROLLBACK').catch(() => undefined);
    await locker.end();
    await database.destroy();
  }
});

it('retries a projection batch PostgreSQL canceled at the bound: its events are projected once it can run, none set aside', async () => {
  await server.catchUp();
  const calls = async () =>
    Number(
      (
        await server.db
          .selectFrom('tool_call')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const before = await calls();
  const locker = new Client({ connectionString: server.databaseUrl!, options: '-c statement_timeout=0' });
  await locker.connect();
  try {
    // The read model the projector writes locked against writes: ingest goes on, the projector's batch waits. (In
    // SHARE mode, which takes no transaction id: one would hold the log's horizon, and nothing would be projected.)
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE tool_call IN SHARE MODE');
    const trace = new AgentTrace();
    const t0 = Date.now() - 10_000;
    const spans = trace.run('canceled-batch', t0, [{ tool: 'lookup', startMs: t0, durationMs: 1 }]);
    await trace.shutdown();
    expect(await sendSpans(server.url, server.ingestKey, spans)).toBe(200);
    const waiting = async () =>
      (
        await adminQuery<{ waiter: string }>(
          `SELECT pid || '@' || query_start AS waiter FROM pg_stat_activity
            WHERE datname = current_database() AND state = 'active' AND wait_event_type = 'Lock'`,
        )
      ).map((row) => row.waiter);
    let batch: string | undefined;
    await until(
      'the projector waiting for the lock',
      async () => (batch = (await waiting())[0]) !== undefined,
    );
    // Then PostgreSQL cancels that statement while the lock is still held (the projector tries again later).
    await until('the waiting batch canceled', async () => !(await waiting()).includes(batch!), 10_000);
  } finally {
    await locker.query('ROLLBACK').catch(() => undefined);
    await locker.end();
  }
  await server.catchUp();
  expect(await calls()).toBe(before + 1);
  expect(await setAsideRecords(server.db)).toEqual([]);
}, 60_000);

it("sets no statement_timeout with ERRATA_PG_QUERY_TIMEOUT_MS=0 (the database's applies)", async () => {
  const unbounded = openDatabase({
    databaseUrl: server.databaseUrl!,
    dataDir: '',
    poolSize: 1,
    queryTimeoutMs: 0,
  });
  try {
    const { rows } = await sql<{ statement_timeout: string }>`SHOW statement_timeout`.execute(unbounded.db);
    expect(rows).toEqual([{ statement_timeout: '0' }]);
  } finally {
    await unbounded.destroy();
  }
});

it('answers ingest 503 + Retry-After while every statement times out, and /readyz says failing; an OTel exporter retries, and its spans land', async () => {
  const trace = new AgentTrace();
  const t0 = Date.now() - 10_000;
  const spans = trace.run('timeouts', t0, [{ tool: 'lookup', startMs: t0, durationMs: 1 }]);
  await trace.shutdown();
  let exported: Promise<ExportResult> | null = null;
  // Every table locked meanwhile: every statement waits on one, and PostgreSQL cuts it off at the bound.
  const locker = new Client({ connectionString: server.databaseUrl!, options: '-c statement_timeout=0' });
  try {
    await locker.connect();
    await locker.query('BEGIN');
    const { rows } = await locker.query<{ tables: string }>(
      `SELECT string_agg(format('%I', tablename), ', ') AS tables FROM pg_tables WHERE schemaname = current_schema()`,
    );
    await locker.query(`LOCK TABLE ${rows[0]!.tables} IN ACCESS EXCLUSIVE MODE`);
    const answer = await postSpans(spans);
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('5');
    // A real exporter (default export deadline, 10 s) meets the 503, waits the Retry-After, and sends again.
    const exporter = new OTLPTraceExporter({
      url: `${server.url}/v1/traces`,
      headers: { authorization: `Bearer ${server.ingestKey}` },
    });
    exported = new Promise((resolve) => exporter.export([...spans], resolve));
    // The REST API says so too, with the same Retry-After, rather than a 500.
    const report = await fetch(`${server.url}/api/v1/reports/retry-waste`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(report.status).toBe(503);
    expect(report.headers.get('retry-after')).toBe('5');
    expect(await report.json()).toMatchObject({ message: 'the database cannot answer now; retry later' });
    // Readiness says the database answers but its checks fail, not that it is unreachable (as a stall would).
    const readiness = await fetch(`${server.url}/readyz`);
    expect(readiness.status).toBe(503);
    expect(await readiness.json()).toMatchObject({ ready: false, database: 'failing' });
    // No statement of the server's has waited for the lock much past the bound: PostgreSQL canceled each, where a
    // client-side timeout alone left them waiting (and holding their backends) for as long as the lock is held.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(
      await adminQuery(
        `SELECT pid, query FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'
            AND query_start < clock_timestamp() - make_interval(secs => $1)`,
        [(QUERY_TIMEOUT_MS + 1_000) / 1_000],
      ),
    ).toEqual([]);
  } finally {
    await locker.query('ROLLBACK').catch(() => undefined);
    await locker.end();
  }
  expect((await exported)?.code).toBe(ExportResultCode.SUCCESS);
  expect((await postSpans(spans)).status).toBe(200);
}, 60_000);

it('answers 503 + Retry-After while the database accepts no connections, and /readyz says unreachable', async () => {
  // Given a database that refuses new connections (SQLSTATE 55000), and the pool's connections ended
  await withConnectionsRefused(server.databaseUrl!, async () => {
    // Then REST and ingest ask to retry later, and readiness says the database cannot be reached
    const report = await fetch(`${server.url}/api/v1/reports/retry-waste`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(report.status).toBe(503);
    expect(report.headers.get('retry-after')).toBe('5');
    const trace = new AgentTrace();
    const t0 = Date.now() - 10_000;
    const ingest = await postSpans(trace.run('closed', t0, [{ tool: 'lookup', startMs: t0, durationMs: 1 }]));
    expect(ingest.status).toBe(503);
    expect(ingest.headers.get('retry-after')).toBe('5');
    const readiness = await fetch(`${server.url}/readyz`);
    expect(readiness.status).toBe(503);
    expect(await readiness.json()).toMatchObject({ ready: false, database: 'unreachable' });
  });
  await until('ready again', async () => (await ready()) === 200);
}, 60_000);

/**
 * One statement on a connection of its own, which never times out; its rows. Outside the lockers' transactions, whose
 * view of pg_stat_activity is taken once, at their first look.
 */
async function adminQuery<Row>(text: string, values: unknown[] = []): Promise<Row[]> {
  const admin = new Client({ connectionString: server.databaseUrl!, options: '-c statement_timeout=0' });
  await admin.connect();
  try {
    return (await admin.query<Row & object>(text, values)).rows;
  } finally {
    await admin.end();
  }
}

async function postSpans(spans: Parameters<typeof sendSpans>[2]): Promise<Response> {
  const { ProtobufTraceSerializer } = await import('@opentelemetry/otlp-transformer');
  return fetch(`${server.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf', authorization: `Bearer ${server.ingestKey}` },
    body: ProtobufTraceSerializer.serializeRequest(spans)!,
  });
}
