/**
 * Secrets an exporter puts in span attributes never reach the database (DOMAIN.md §6): a plain OTLP/JSON trace (no
 * Errata SDK) carrying credentials and personal data in every attribute Errata stores goes through real ingest and
 * projection; then no row of any table, and no trace the REST API serves, holds one of them.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/server';

/** Secrets the redaction replaces wherever they are written, each with a distinctive part the check looks for. */
const SECRETS = [
  'sk-ABCDEFGHIJKLMNOPQRSTUV1234',
  'Authorization: Bearer abc123def456ghi789',
  'postgres://admin:hunter2pw@db.internal/x',
  'password=hunter2pw',
  'alice.secret@example.com',
  'acct 12345678901234',
  'Authorization: Bearer QwErTyUiOpAsDfGhJkLzXcVbNmQwErTy',
  'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  'alice.secret\\u0040example.com',
].join(' | ');
/** A JSON error result with secrets in a list and an object under secret-named keys. */
const SECRET_JSON = JSON.stringify({
  error: 'login failed',
  password: ['Sup3rS3cret!'],
  token: { access: 'tok_live_9f8e7d6c' },
});
const LEAKED =
  /ABCDEFGHIJKLMNOPQRSTUV|abc123def456|hunter2|alice\.secret|12345678901234|QwErTyUiOp|wJalrXUtnFEMI|Sup3rS3cret|tok_live/;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const text = (key: string, value: string) => ({ key, value: { stringValue: value } });
const bool = (key: string, value: boolean) => ({ key, value: { boolValue: value } });
const T0 = BigInt(Date.UTC(2026, 10, 30, 12)) * 1_000_000n;
const at = (ms: number) => `${T0 + BigInt(ms) * 1_000_000n}`;

function secretTrace(traceId: string) {
  const agent = hex(8);
  return [
    {
      traceId,
      spanId: agent,
      name: 'invoke_agent support',
      kind: 1,
      startTimeUnixNano: at(0),
      endTimeUnixNano: at(5_000),
      attributes: [
        text('gen_ai.operation.name', 'invoke_agent'),
        text('gen_ai.conversation.id', 'conv-alice.secret@example.com'),
      ],
    },
    {
      traceId,
      spanId: hex(8),
      parentSpanId: agent,
      name: 'tools/call lookup',
      kind: 3,
      startTimeUnixNano: at(10),
      endTimeUnixNano: at(60),
      attributes: [
        text('mcp.method.name', 'tools/call'),
        text('gen_ai.tool.name', 'lookup'),
        text('errata.server.name', 'crm'),
        bool('errata.result.is_error', true),
        text('errata.result.text', `lookup failed: ${SECRETS}`),
        text('errata.result.structured', SECRET_JSON),
        text('error.type', `tool_error ${SECRETS}`),
        text('rpc.response.status_code', `-32603 ${SECRETS}`),
        text('jsonrpc.request.id', `req ${SECRETS}`),
        text('mcp.session.id', 'sess-alice.secret@example.com'),
        text('server.address', 'user:hunter2pw@mcp.internal'),
      ],
      status: { code: 2, message: `failed: ${SECRETS}` },
    },
  ];
}

describe('a trace with secrets in its attributes, ingested over OTLP', () => {
  let server: TestServer;
  const traceId = hex(16);
  beforeAll(async () => {
    server = await startTestServer('postgres');
    const response = await fetch(`${server.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.ingestKey}` },
      body: JSON.stringify({
        resourceSpans: [
          { resource: {}, scopeSpans: [{ scope: { name: 'manual' }, spans: secretTrace(traceId) }] },
        ],
      }),
    });
    expect(response.status).toBe(200);
    await server.catchUp();
  });
  afterAll(() => server.close());

  it('is stored and projected', async () => {
    const calls = await server.db.selectFrom('tool_call').select('tool').execute();
    const runs = await server.db.selectFrom('agent_run').select('conversation_id').execute();
    expect(calls.map((call) => call.tool)).toEqual(['lookup']);
    expect(runs).toHaveLength(1);
  });

  it('leaves no secret in any table: the event log, the read models and the rollups', async () => {
    const tables = await sql<{ name: string }>`
      select tablename as name from pg_tables where schemaname = current_schema() order by tablename`.execute(
      server.db,
    );
    expect(tables.rows.map((table) => table.name)).toEqual(
      expect.arrayContaining(['event', 'tool_call', 'agent_run']),
    );
    for (const { name } of tables.rows) {
      const rows = await sql<{ row: string }>`select t::text as row from ${sql.table(name)} t`.execute(
        server.db,
      );
      const leaks = rows.rows.filter((row) => LEAKED.test(row.row)).map((row) => `${name}: ${row.row}`);
      expect(leaks).toEqual([]);
    }
  });

  it('serves no secret in the trace view', async () => {
    const response = await fetch(`${server.url}/api/v1/traces/${traceId}`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(response.status).toBe(200);
    const body = await response.text();
    expect(body).toContain('lookup failed');
    expect(body).not.toMatch(LEAKED);
  });
});
