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
/** A successful call's whole result, as Traceloop exports it: a customer's record, which Errata does not keep. */
const CUSTOMER_RECORD = 'Customer: Jane Roe, 12 Elm Street, Springfield; diagnosis: type 2 diabetes';
const LEAKED =
  /ABCDEFGHIJKLMNOPQRSTUV|abc123def456|hunter2|alice\.secret|12345678901234|QwErTyUiOp|wJalrXUtnFEMI|Sup3rS3cret|tok_live|Jane Roe/;

/** A Traceloop (OpenLLMetry) tool span that is no error: its output attribute holds the whole result. */
function traceloopSpan(traceId: string, parentSpanId: string, startMs: number, output: unknown) {
  return {
    traceId,
    spanId: hex(8),
    parentSpanId,
    name: 'get_customer.tool',
    kind: 1,
    startTimeUnixNano: at(startMs),
    endTimeUnixNano: at(startMs + 20),
    attributes: [
      text('traceloop.span.kind', 'tool'),
      text('traceloop.entity.name', 'get_customer'),
      text('traceloop.entity.input', JSON.stringify({ arguments: { id: 'c-1' } })),
      text('traceloop.entity.output', JSON.stringify(output)),
    ],
    status: { code: 1 },
  };
}

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
        // An id keeps its digits (a request counter, a UUID: no secret, and it must still match), so the account
        // number is left out of this one; every credential and address in it is still replaced.
        text('jsonrpc.request.id', `req ${SECRETS.replace('acct 12345678901234', 'acct 4')}`),
        text('mcp.session.id', 'sess-alice.secret@example.com'),
        text('server.address', 'user:hunter2pw@mcp.internal'),
      ],
      status: { code: 2, message: `failed: ${SECRETS}` },
    },
    traceloopSpan(traceId, agent, 100, { result: CUSTOMER_RECORD, is_error: false }),
    // A success that says it failed (failure-as-empty): its text is kept, for the misclassified results report.
    traceloopSpan(traceId, agent, 200, { result: { ok: false, error: 'CRM unavailable' }, is_error: false }),
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

  it('is stored and projected; a hidden failure keeps the text it was detected by', async () => {
    const calls = await server.db
      .selectFrom('tool_call')
      .select(['tool', 'outcome', 'failure_as_empty', 'sample_text'])
      .orderBy('start_ns')
      .execute();
    const runs = await server.db.selectFrom('agent_run').select('conversation_id').execute();
    expect(calls).toEqual([
      expect.objectContaining({ tool: 'lookup', outcome: 'tool_error' }),
      { tool: 'get_customer', outcome: 'ok', failure_as_empty: false, sample_text: null },
      {
        tool: 'get_customer',
        outcome: 'ok',
        failure_as_empty: true,
        sample_text: '{"ok":false,"error":"CRM unavailable"}',
      },
    ]);
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
