/**
 * PostgreSQL ends connections on a restart, an admin command, a failover or a network cut. The pool must drop them
 * and carry on; an unhandled 'error' from the pool or from a connection in use would end the whole Errata process
 * (in this in-process test, Vitest reports it as an unhandled error and the run fails).
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { Client } from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AgentTrace } from './support/agent-spans';
import { sendSpans, startTestServer, type TestServer } from './support/server';
import { withConnectionsRefused } from './support/postgres';
import { until } from './support/until';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('postgres');
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

it('answers ingest 503 + Retry-After while every statement times out, and /readyz says failing; an OTel exporter retries, and its spans land', async () => {
  const trace = new AgentTrace();
  const t0 = Date.now() - 10_000;
  const spans = trace.run('timeouts', t0, [{ tool: 'lookup', startMs: t0, durationMs: 1 }]);
  await trace.shutdown();
  const database = server.databaseUrl!.split('/').at(-1)!.split('?')[0]!;
  let exported: Promise<ExportResult> | null = null;
  // Every table locked meanwhile, so that every statement on one waits past the 1 ms (a fast machine runs a one-span
  // COPY within it).
  const locker = new Client({ connectionString: server.databaseUrl!, options: '-c statement_timeout=0' });
  try {
    // New connections take the setting: end the pool's, so that it opens new ones.
    await adminQuery(`ALTER DATABASE "${database}" SET statement_timeout = '1ms'`);
    await terminateConnections();
    await locker.connect();
    await locker.query('BEGIN');
    const { rows } = await locker.query<{ tables: string }>(
      `SELECT string_agg(format('%I', tablename), ', ') AS tables FROM pg_tables WHERE schemaname = current_schema()`,
    );
    await locker.query(`LOCK TABLE ${rows[0]!.tables} IN ACCESS EXCLUSIVE MODE`);
    const answer = await postSpans(spans);
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('5');
    // The REST API says so too, with the same Retry-After, rather than a 500.
    const report = await fetch(`${server.url}/api/v1/reports/retry-waste`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(report.status).toBe(503);
    expect(report.headers.get('retry-after')).toBe('5');
    expect(await report.json()).toMatchObject({ message: 'the database cannot answer now; retry later' });
    // Readiness says the database answers but its checks fail, not that it is unreachable.
    const readiness = await fetch(`${server.url}/readyz`);
    expect(readiness.status).toBe(503);
    expect(await readiness.json()).toMatchObject({ ready: false, database: 'failing' });
    // A real exporter (default export deadline, 10 s) meets the 503, waits the Retry-After, and sends again.
    const exporter = new OTLPTraceExporter({
      url: `${server.url}/v1/traces`,
      headers: { authorization: `Bearer ${server.ingestKey}` },
    });
    exported = new Promise((resolve) => exporter.export([...spans], resolve));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  } finally {
    await locker.query('ROLLBACK').catch(() => undefined);
    await locker.end();
    await adminQuery(`ALTER DATABASE "${database}" RESET statement_timeout`);
  }
  await terminateConnections();
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

/** One statement on a connection of its own, which never times out. */
async function adminQuery(text: string): Promise<void> {
  const admin = new Client({ connectionString: server.databaseUrl!, options: '-c statement_timeout=0' });
  await admin.connect();
  try {
    await admin.query(text);
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
