import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { sql } from 'kysely';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentTrace } from './support/agent-spans';
import { listEvents, setAsideRecords, startTestServer, type TestServer } from './support/server';

const status = protobuf
  .loadSync(join(__dirname, '../libs/otlp/proto/google/rpc/status.proto'))
  .lookupType('google.rpc.Status');

function validProtobufBody(agentName = 'bad-input'): Uint8Array {
  const t0 = Date.UTC(2026, 10, 30, 11, 0, 0);
  const spans = new AgentTrace().run(agentName, t0, [{ tool: 'search', startMs: t0 + 1, durationMs: 2 }]);
  return ProtobufTraceSerializer.serializeRequest(spans)!;
}

function jsonSpan(traceId: string, spanId: string, name = 'tools/call search') {
  const start = `${BigInt(Date.UTC(2026, 10, 30, 12)) * 1_000_000n}`;
  return {
    traceId,
    spanId,
    name,
    kind: 3,
    startTimeUnixNano: start,
    endTimeUnixNano: start,
    attributes: [
      { key: 'mcp.method.name', value: { stringValue: 'tools/call' } },
      { key: 'gen_ai.tool.name', value: { stringValue: 'search' } },
    ],
  };
}

function jsonRequest(spans: unknown[]) {
  return JSON.stringify({
    resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 't' }, spans }] }],
  });
}

describe('OTLP/HTTP ingest refuses bad input with the documented status, stores nothing of it, and keeps serving', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('postgres', { ERRATA_MAX_BODY_BYTES: String(16 * 1024 * 1024) });
  });
  afterAll(() => server.close());

  async function post(body: Uint8Array | string, headers: Record<string, string>) {
    const response = await fetch(`${server.url}/v1/traces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.ingestKey}`, ...headers },
      body,
    });
    return {
      status: response.status,
      headers: response.headers,
      body: Buffer.from(await response.arrayBuffer()),
    };
  }
  const protobufHeaders = { 'content-type': 'application/x-protobuf' };
  const jsonHeaders = { 'content-type': 'application/json' };
  const statusMessage = (body: Buffer) =>
    (status.toObject(status.decode(body)) as { message: string }).message;
  const eventCount = async () => (await listEvents(server.db)).length;

  async function expectRefused(
    request: () => Promise<{ status: number; headers: Headers; body: Buffer }>,
    expected: { status: number; message: RegExp; encoding: 'protobuf' | 'json' },
  ) {
    const before = await eventCount();
    const response = await request();
    expect(response.status).toBe(expected.status);
    const message =
      expected.encoding === 'json'
        ? (JSON.parse(response.body.toString('utf8')) as { message: string }).message
        : statusMessage(response.body);
    expect(message).toMatch(expected.message);
    expect(await eventCount()).toBe(before);
    const healthy = await post(validProtobufBody(), protobufHeaders);
    expect(healthy.status).toBe(200);
  }

  it('400 with a protobuf google.rpc.Status for a truncated protobuf body', async () => {
    const body = validProtobufBody();
    await expectRefused(() => post(body.subarray(0, body.length - 7), protobufHeaders), {
      status: 400,
      message: /protobuf|decode|invalid|truncat|index out of range/i,
      encoding: 'protobuf',
    });
  });

  it('400 with a JSON google.rpc.Status for invalid JSON', async () => {
    await expectRefused(() => post('{"resourceSpans": [', jsonHeaders), {
      status: 400,
      message: /JSON/i,
      encoding: 'json',
    });
  });

  it('400 for a body that claims gzip but is not', async () => {
    await expectRefused(
      () => post(Buffer.from('definitely not gzip'), { ...protobufHeaders, 'content-encoding': 'gzip' }),
      {
        status: 400,
        message: /gzip/i,
        encoding: 'protobuf',
      },
    );
  });

  it('413 for a body over the limit, and for a small gzip body that inflates past it', async () => {
    const huge = Buffer.alloc(17 * 1024 * 1024, 0x41);
    await expectRefused(() => post(huge, protobufHeaders), {
      status: 413,
      message: /exceeds/,
      encoding: 'protobuf',
    });
    const bomb = gzipSync(Buffer.alloc(40 * 1024 * 1024, 0));
    expect(bomb.length).toBeLessThan(100 * 1024);
    await expectRefused(() => post(bomb, { ...protobufHeaders, 'content-encoding': 'gzip' }), {
      status: 413,
      message: /decompression/,
      encoding: 'protobuf',
    });
  });

  it('415 for an unknown content type', async () => {
    await expectRefused(() => post('hello', { 'content-type': 'text/plain' }), {
      status: 415,
      message: /Content-Type/,
      encoding: 'json',
    });
  });

  it('401 for a missing or wrong key, 403 for a read key', async () => {
    const body = validProtobufBody();
    await expectRefused(
      () =>
        fetch(`${server.url}/v1/traces`, { method: 'POST', headers: protobufHeaders, body }).then(
          async (r) => ({
            status: r.status,
            headers: r.headers,
            body: Buffer.from(await r.arrayBuffer()),
          }),
        ),
      { status: 401, message: /missing API key/, encoding: 'protobuf' },
    );
    await expectRefused(() => post(body, { ...protobufHeaders, authorization: 'Bearer not-a-key' }), {
      status: 401,
      message: /invalid or revoked/,
      encoding: 'protobuf',
    });
    await expectRefused(() => post(body, { ...protobufHeaders, authorization: `Bearer ${server.readKey}` }), {
      status: 403,
      message: /read key/,
      encoding: 'protobuf',
    });
  });

  it('200 with partial_success for wrong-length and all-zero ids; the valid span is stored', async () => {
    const good = jsonSpan('5b8efff798038103d269b633813fc60c', 'eee19b7ec3c1b174');
    const before = await eventCount();
    const response = await post(
      jsonRequest([
        good,
        jsonSpan('5b8efff798038103d269b633813fc6', 'eee19b7ec3c1b175'),
        jsonSpan('00000000000000000000000000000000', 'eee19b7ec3c1b176'),
        jsonSpan('5b8efff798038103d269b633813fc60c', '0000000000000000'),
        jsonSpan('5b8efff798038103d269b633813fc60c', ''),
      ]),
      jsonHeaders,
    );
    expect(response.status).toBe(200);
    const answer = JSON.parse(response.body.toString('utf8')) as {
      partialSuccess: { rejectedSpans: string; errorMessage: string };
    };
    expect(Number(answer.partialSuccess.rejectedSpans)).toBe(4);
    expect(answer.partialSuccess.errorMessage).toMatch(/4 spans rejected/);
    const events = await listEvents(server.db);
    expect(events.length - before).toBe(1);
    expect(events.at(-1)!.spanId).toBe('eee19b7ec3c1b174');
  });

  it('counts a request whose every span is rejected in ingest_batch, as every other request', async () => {
    const response = await post(
      jsonRequest([
        jsonSpan('00000000000000000000000000000000', 'fee19b7ec3c1b176'),
        jsonSpan('5b8efff798038103d269b633813fc60d', '0000000000000000'),
      ]),
      jsonHeaders,
    );
    expect(response.status).toBe(200);
    const batch = await server.db
      .selectFrom('ingest_batch')
      .select(['spans_received', 'events_appended', 'spans_dropped', 'spans_rejected'])
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(batch).toEqual({ spans_received: 2, events_appended: 0, spans_dropped: 0, spans_rejected: 2 });
  });

  it('200 with partial_success for a span Errata cannot read (arguments nested 20,000 deep); the rest of the request is stored', async () => {
    const good = jsonSpan('6c9f0f0798038103d269b633813fc60c', 'aaa19b7ec3c1b174');
    const deep = jsonSpan('6c9f0f0798038103d269b633813fc60c', 'aaa19b7ec3c1b175');
    deep.attributes.push({
      key: 'gen_ai.tool.call.arguments',
      value: { stringValue: `${'['.repeat(20_000)}${']'.repeat(20_000)}` },
    });
    const before = await eventCount();
    const response = await post(jsonRequest([good, deep]), jsonHeaders);
    expect(response.status).toBe(200);
    const answer = JSON.parse(response.body.toString('utf8')) as {
      partialSuccess: { rejectedSpans: string; errorMessage: string };
    };
    expect(Number(answer.partialSuccess.rejectedSpans)).toBe(1);
    expect(answer.partialSuccess.errorMessage).toMatch(/aaa19b7ec3c1b175.*could not be read/);
    const events = await listEvents(server.db);
    expect(events.length - before).toBe(1);
    expect(events.at(-1)!.spanId).toBe('aaa19b7ec3c1b174');
  });

  it('stores strings holding NUL characters (which Postgres text cannot hold) with U+FFFD in their place', async () => {
    const span = jsonSpan('7b8efff798038103d269b633813fc60c', 'bee19b7ec3c1b174');
    span.attributes[1] = { key: 'gen_ai.tool.name', value: { stringValue: 'sea\u0000rch' } };
    span.attributes.push({ key: 'errata.result.is_error', value: { boolValue: true } } as never, {
      key: 'errata.result.text',
      value: { stringValue: 'bad \u0000 byte; a literal \\u0000 stays' },
    });
    const response = await post(jsonRequest([span]), jsonHeaders);
    expect(response.status).toBe(200);
    const stored = (await listEvents(server.db)).find((event) => event.spanId === 'bee19b7ec3c1b174')!;
    expect(stored.toolName).toBe('sea\uFFFDrch');
    expect(JSON.stringify(stored.data)).toContain('bad \uFFFD byte; a literal \\\\u0000 stays');
  });

  it('stores counts past PostgreSQL integer (tokens, attempt, retry-after, report units) and projects them as unknown, so the reports of every project go on', async () => {
    const traceId = '5b8efff798038103d269b633813fc60c';
    const call = jsonSpan(traceId, 'cee19b7ec3c1b174');
    const int = (key: string, value: string) => ({ key, value: { intValue: value } });
    call.attributes.push(
      int('gen_ai.usage.input_tokens', '1200000000') as never,
      int('gen_ai.usage.output_tokens', '1200000000') as never,
      int('errata.retry.attempt', '3000000000') as never,
      int('errata.error.retry_after_ms', '3000000000') as never,
    );
    const report = jsonSpan(traceId, 'cee19b7ec3c1b175', 'errata.subagent_report');
    report.attributes = [
      { key: 'errata.subagent.status', value: { stringValue: 'complete' } },
      int('errata.subagent.completed', '3000000000') as never,
      int('errata.subagent.total', '3000000001') as never,
    ];
    expect((await post(jsonRequest([call, report]), jsonHeaders)).status).toBe(200);
    expect((await post(validProtobufBody('after-big-counts'), protobufHeaders)).status).toBe(200);

    await server.catchUp();

    const events = await listEvents(server.db);
    const storedCall = events.find((event) => event.spanId === 'cee19b7ec3c1b174')!;
    expect(storedCall.data).toMatchObject({ tokens: 2_400_000_000, retryHint: { attempt: 3_000_000_000 } });
    const { rows: calls } = await sql<{
      tokens: number | null;
      retry_attempt: number | null;
      retry_after_ms: number | null;
    }>`
      SELECT tokens, retry_attempt, retry_after_ms FROM tool_call WHERE span_id = decode('cee19b7ec3c1b174', 'hex')`.execute(
      server.db,
    );
    expect(calls).toEqual([{ tokens: null, retry_attempt: null, retry_after_ms: null }]);
    const { rows: reports } = await sql<{ status: string; completed: number | null; total: number | null }>`
      SELECT status, completed, total FROM subagent_report WHERE span_id = decode('cee19b7ec3c1b175', 'hex')`.execute(
      server.db,
    );
    expect(reports).toEqual([{ status: 'complete', completed: null, total: null }]);
    const { rows: runs } = await sql<{ agent_name: string }>`
      SELECT agent_name FROM agent_run WHERE agent_name = 'after-big-counts'`.execute(server.db);
    expect(runs).toHaveLength(1);
  });

  it('stores strings holding a lone UTF-16 surrogate (which jsonb refuses) with U+FFFD in its place, and the rest of the request', async () => {
    const lone = jsonSpan('8b8efff798038103d269b633813fc60c', 'dee19b7ec3c1b174');
    lone.attributes[1] = { key: 'gen_ai.tool.name', value: { stringValue: 'sea\ud800rch' } };
    lone.attributes.push({ key: 'errata.result.is_error', value: { boolValue: true } } as never, {
      key: 'errata.result.text',
      value: { stringValue: 'half a pair \udc00 here, a whole one 😀 there' },
    });
    const good = jsonSpan('8b8efff798038103d269b633813fc60c', 'dee19b7ec3c1b175');
    const response = await post(jsonRequest([lone, good]), jsonHeaders);
    expect(response.status).toBe(200);
    const events = await listEvents(server.db);
    const stored = events.find((event) => event.spanId === 'dee19b7ec3c1b174')!;
    expect(stored.toolName).toBe('sea\uFFFDrch');
    expect(JSON.stringify(stored.data)).toContain('half a pair \uFFFD here, a whole one 😀 there');
    expect(events.some((event) => event.spanId === 'dee19b7ec3c1b175')).toBe(true);
  });

  it('sums wasted time without overflow: retries that claim to have lasted since 1970 no longer stop the projection', async () => {
    // Two traces, each a permission failure and its (wasted) retry ending just before 2^63 ns, in one hour bucket
    const longRetry = (traceId: string, id: number) => {
      const call = (spanId: string, startNs: bigint, endNs: bigint, failed: boolean) => ({
        ...jsonSpan(traceId, spanId),
        startTimeUnixNano: String(startNs),
        endTimeUnixNano: String(endNs),
        attributes: [
          ...jsonSpan(traceId, spanId).attributes,
          { key: 'errata.args.hash', value: { stringValue: 'a'.repeat(32) } },
          { key: 'errata.result.is_error', value: { boolValue: failed } },
          // No declared category: an untyped-error finding, so the finding rollups sum the waste too.
          ...(failed ? [{ key: 'errata.result.text', value: { stringValue: 'Error: access denied' } }] : []),
        ],
      });
      return [
        call(`f00000000000000${id}`, 1_000n, 2_000n, true),
        call(`e00000000000000${id}`, 3_000n, 2n ** 63n - 1n, false),
      ];
    };
    const body = jsonRequest([
      ...longRetry('4b8efff798038103d269b633813fc601', 1),
      ...longRetry('4b8efff798038103d269b633813fc602', 2),
    ]);
    expect((await post(body, jsonHeaders)).status).toBe(200);

    await server.catchUp();

    const response = await fetch(
      `${server.url}/api/v1/reports/retry-waste?from=1970-01-01T00:00:00Z&to=1970-01-01T01:00:00Z`,
      { headers: { authorization: `Bearer ${server.readKey}` } },
    );
    const report = (await response.json()) as { totals: { wastedRetries: number; wastedMs: number } };
    expect(report.totals.wastedRetries).toBe(2);
    expect(report.totals.wastedMs).toBeGreaterThan(2 * 9.2e12); // 2^63 ns is 9.22e12 ms
    const { rows } = await sql<{ wasted: string }>`
      SELECT max(wasted_ns)::text AS wasted FROM finding_rollup WHERE bucket = '1970-01-01T00:00:00Z'`.execute(
      server.db,
    );
    expect(Number(rows[0]!.wasted)).toBeGreaterThan(2 * 9.2e18);
    expect(await setAsideRecords(server.db)).toEqual([]);
  });

  it('200 with partial_success naming the attribute for a 10 MB attribute; the rest is stored', async () => {
    const big = jsonSpan('6b8efff798038103d269b633813fc60c', 'aee19b7ec3c1b174');
    big.attributes.push({ key: 'errata.result.text', value: { stringValue: 'x'.repeat(10 * 1024 * 1024) } });
    const good = jsonSpan('6b8efff798038103d269b633813fc60c', 'aee19b7ec3c1b175');
    const before = await eventCount();
    const response = await post(jsonRequest([big, good]), jsonHeaders);
    expect(response.status).toBe(200);
    const answer = JSON.parse(response.body.toString('utf8')) as {
      partialSuccess: { rejectedSpans: string; errorMessage: string };
    };
    expect(Number(answer.partialSuccess.rejectedSpans)).toBe(1);
    expect(answer.partialSuccess.errorMessage).toMatch(/errata\.result\.text/);
    const events = await listEvents(server.db);
    expect(events.length - before).toBe(1);
    expect(events.at(-1)!.spanId).toBe('aee19b7ec3c1b175');
  });
});
