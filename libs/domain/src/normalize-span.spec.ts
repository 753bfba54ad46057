import { describe, expect, it } from 'vitest';

import { argsFingerprint, canonicalJson } from './args-hash';
import {
  errataToolSpan,
  makeSpan,
  type McpResult,
  protocolErrorSpan,
  sid,
  T0,
  toolCallOf,
  TRACE,
  type ToolSpanInit,
} from './fixtures.spec-helper';
import { classifyToolCall } from './classify';
import { MAX_NAME_BYTES, normalizeSpan } from './normalize-span';
import { SpanKind, StatusCode } from './span';

describe('normalizeSpan: tool calls (Errata SDK)', () => {
  it('given an SDK tools/call span, then every ToolCallData field is filled from its attributes', () => {
    const span = errataToolSpan(
      'lookup_order',
      { isError: true, content: [{ type: 'text', text: 'Order ORD-1 not reachable, mail ops@example.com' }] },
      {
        spanId: sid(42),
        parentSpanId: sid(41),
        attributes: {
          'server.address': 'orders.internal',
          'server.port': 8443,
          'errata.error.category': 'transient',
          'errata.error.retryable': true,
          'errata.error.code': 'ORDERS_DOWN',
          'errata.error.retry_after_ms': 1500,
          'errata.args.hash': 'ABCDEF0123456789abcdef0123456789',
          'errata.args.size': 42,
          'errata.retry.of': sid(40),
          'errata.retry.attempt': 2,
          'gen_ai.usage.input_tokens': 100,
          'gen_ai.usage.output_tokens': 20,
          'gen_ai.tool.call.arguments': '{"order_id":"ORD-1"}',
        },
      },
    );
    expect(normalizeSpan(span)).toEqual({
      type: 'ToolCallObserved',
      data: {
        span: {
          traceId: TRACE,
          spanId: sid(42),
          parentSpanId: sid(41),
          startTimeUnixNano: T0.toString(),
          endTimeUnixNano: (T0 + 120_000_000n).toString(),
        },
        source: 'errata',
        tool: 'lookup_order',
        server: { name: 'support-server', version: '1.2.0', address: 'orders.internal', port: 8443 },
        mcp: { sessionId: 'sess-1', protocolVersion: '2025-11-25', requestId: '7', transport: 'pipe' },
        outcome: 'tool_error',
        errorType: 'tool_error',
        rpcStatusCode: null,
        httpStatusCode: null,
        statusMessage: null,
        result: {
          isError: true,
          empty: null,
          itemCount: null,
          text: 'Order ORD-1 not reachable, mail [REDACTED:email]',
          structured: null,
          textMirror: null,
        },
        declared: { category: 'transient', retryable: true, code: 'ORDERS_DOWN', retryAfterMs: 1500 },
        args: { hash: 'abcdef0123456789abcdef0123456789', size: 42 },
        retryHint: { of: sid(40), attempt: 2 },
        tokens: 120,
      },
    });
  });

  it('redacts and cuts the declared code and category like every text (another exporter may send anything there)', () => {
    const span = errataToolSpan(
      'run_python',
      { isError: true },
      {
        attributes: {
          'errata.error.code': 'print("sk-proj-abcdefghijklmnopqrstuvwx", "jane.doe@example.com")',
          'errata.error.category': 'x'.repeat(5000),
        },
      },
    );
    const declared = toolCallOf(span).declared;
    expect(declared.code).toBe('print("[REDACTED:api_key]", "[REDACTED:email]")');
    expect(Buffer.byteLength(declared.category ?? '')).toBeLessThanOrEqual(2048);
  });

  it('redacts and cuts the free-text attributes an exporter may fill with anything (error type, ids, address)', () => {
    const secrets = 'Authorization: Bearer abc123def456ghi789 password=hunter2pw alice.secret@example.com';
    const span = errataToolSpan(
      'lookup',
      { isError: true },
      {
        attributes: {
          'error.type': `tool_error ${secrets}`,
          'rpc.response.status_code': `-32603 ${secrets}`,
          'jsonrpc.request.id': `req ${secrets} ${'x'.repeat(3_000)}`,
          'mcp.session.id': 'sess-alice.secret@example.com',
          'mcp.protocol.version': `2025-11-25 ${secrets}`,
          'network.transport': `pipe ${secrets}`,
          'server.address': 'user:hunter2pw@mcp.internal',
        },
      },
    );
    const call = toolCallOf(span);
    const stored = [
      call.errorType,
      call.rpcStatusCode,
      call.mcp.requestId,
      call.mcp.sessionId,
      call.mcp.protocolVersion,
      call.mcp.transport,
      call.server.address,
    ];
    for (const text of stored) {
      expect(text).not.toMatch(/hunter2|abc123def456|alice\.secret/);
      expect(Buffer.byteLength(text!)).toBeLessThanOrEqual(MAX_NAME_BYTES);
    }
    expect(call.errorType).toBe(
      'tool_error Authorization: Bearer [REDACTED:bearer] password=[REDACTED:password] [REDACTED:email]',
    );
    expect(call.mcp.requestId).toMatch(/^req .*…\[truncated \d+ bytes\]$/);
    expect(call.server.address).toBe('mcp.internal');
  });

  it('keeps session, request and conversation ids as sent, digits and all: they must still find the session', () => {
    // A UUID whose first group is all digits (one session id in fifty), a 10-digit counter, a timestamped id: the
    // digit-run rule of free texts made them [REDACTED:number], and the stored session no longer matched the server's.
    const sessionId = '12345678-9abc-4def-8123-456789012345';
    const requestId = '1234567890';
    const conversationId = 'conv-20261201093000123';
    const call = toolCallOf(
      errataToolSpan(
        'lookup',
        { isError: false },
        { attributes: { 'mcp.session.id': sessionId, 'jsonrpc.request.id': requestId } },
      ),
    );
    expect(call.mcp).toMatchObject({ sessionId, requestId });
    const run = normalizeSpan(
      makeSpan({
        name: 'invoke_agent support',
        kind: SpanKind.INTERNAL,
        attributes: { 'gen_ai.conversation.id': conversationId },
      }),
    );
    if (run?.type !== 'AgentRunObserved') throw new Error('not a run');
    expect(run.data.conversationId).toBe(conversationId);
  });

  it('keeps a server address whole but for its user info: it names a server that says no name, digits and all', () => {
    const at = (address: string) =>
      toolCallOf(errataToolSpan('t', { isError: false }, { attributes: { 'server.address': address } }))
        .server.address;
    expect(at('node-20261201.svc')).toBe('node-20261201.svc');
    expect(at('node-20261202.svc')).toBe('node-20261202.svc');
    expect(at('admin:s3cret@10.0.0.12')).toBe('10.0.0.12');
  });

  it('keeps the error types and JSON-RPC codes the classifier reads exactly as sent', () => {
    const errorTypes = [
      'tool_error',
      'timeout',
      'TimeoutError',
      'REQUEST_TIMEOUT',
      'AbortError',
      'UnauthorizedError',
      'ECONNREFUSED',
      'ECONNRESET',
      'ENOTFOUND',
      '-32602',
      '-32001',
      '-32000',
      '-32601',
    ];
    for (const errorType of errorTypes) {
      const call = toolCallOf(
        errataToolSpan('t', { content: [] }, { attributes: { 'error.type': errorType } }),
      );
      expect(call.errorType).toBe(errorType);
    }
    for (const code of [-32700, -32602, -32001, -32000, 401, 429]) {
      const call = toolCallOf(protocolErrorSpan('t', code, 'failed'));
      expect([call.errorType, call.rpcStatusCode]).toEqual([String(code), String(code)]);
    }
  });

  it('never keeps raw arguments, unless the project stores them: then redacted and cut like any text', () => {
    const span = errataToolSpan(
      'x',
      { isError: false },
      {
        attributes: {
          'gen_ai.tool.call.arguments':
            '{"pw":"x","password":"hunter2","owner":"jane@example.com","q":"' + 'a'.repeat(200) + '"}',
        },
      },
    );
    expect(JSON.stringify(toolCallOf(span))).not.toContain('"pw"');
    const stored = normalizeSpan(span, { storeArguments: true, textLimitBytes: 120 });
    const args = stored?.type === 'ToolCallObserved' ? stored.data.arguments : undefined;
    expect(args).toMatch(
      /^\{"pw":"x","password":"\[REDACTED:password\]","owner":"\[REDACTED:email\]","q":"a+…\[truncated \d+ bytes\]$/,
    );
    // A span that carried none: null, with the setting on
    const none = normalizeSpan(errataToolSpan('x', { isError: false }), { storeArguments: true });
    expect(none?.type === 'ToolCallObserved' ? none.data.arguments : undefined).toBeNull();
  });

  it('given a JSON-RPC error, then protocol_error with the code and the redacted status message', () => {
    const call = toolCallOf(protocolErrorSpan('lookup_order', -32602, 'Invalid params for jane@example.com'));
    expect(call.outcome).toBe('protocol_error');
    expect(call.rpcStatusCode).toBe('-32602');
    expect(call.errorType).toBe('-32602');
    expect(call.statusMessage).toBe('Invalid params for [REDACTED:email]');
  });

  it('reads the renamed rpc.status_code and the deprecated int rpc.jsonrpc.error_code', () => {
    const base = { name: 'tools/call t', attributes: { 'mcp.method.name': 'tools/call' } };
    const renamed = makeSpan({ ...base, attributes: { ...base.attributes, 'rpc.status_code': '-32001' } });
    const deprecated = makeSpan({
      ...base,
      attributes: { ...base.attributes, 'rpc.jsonrpc.error_code': -32000 },
    });
    expect(toolCallOf(renamed)).toMatchObject({
      rpcStatusCode: '-32001',
      outcome: 'timeout',
      source: 'semconv',
    });
    expect(toolCallOf(deprecated)).toMatchObject({ rpcStatusCode: '-32000', outcome: 'transport_error' });
  });

  it('given an empty result, then ok_empty; and stored texts are cut to textLimitBytes', () => {
    const empty = errataToolSpan('search_docs', { isError: false }, { empty: true, itemCount: 0 });
    expect(toolCallOf(empty).outcome).toBe('ok_empty');
    const long = errataToolSpan('t', { isError: true, content: [{ type: 'text', text: 'x'.repeat(5000) }] });
    const event = normalizeSpan(long, { textLimitBytes: 100 });
    expect(event?.type === 'ToolCallObserved' && event.data.result.text).toMatch(
      /^x+…\[truncated \d+ bytes\]$/,
    );
    expect(Buffer.byteLength((event?.data as { result: { text: string } }).result.text)).toBeLessThanOrEqual(
      100,
    );
  });

  it('given a success whose only text says nothing matched, sent without the empty flag, then ok_empty as the SDK would flag it', () => {
    const noResults = { isError: false, content: [{ type: 'text' as const, text: 'No results found' }] };
    expect(toolCallOf(errataToolSpan('delegate_task', noResults)).outcome).toBe('ok_empty');
    expect(toolCallOf(errataToolSpan('search_docs', noResults, { empty: false })).outcome).toBe('ok');
    expect(toolCallOf(errataToolSpan('search_docs', noResults, { itemCount: 3 })).outcome).toBe('ok');
    const found = { isError: false, content: [{ type: 'text' as const, text: 'Found 3 results' }] };
    expect(toolCallOf(errataToolSpan('search_docs', found)).outcome).toBe('ok');
  });

  it('given a success whose structured payload is an empty list, sent without the empty flag, then ok_empty as the SDK would flag it', () => {
    // Given: seed 003's valid empty result, and seed 000's success envelope for a search that matched nothing.
    const noOrders = { orders: [], message: 'Customer CUS-4471 has no orders.' };
    const noTickets = { ok: true, data: { tickets: [], result_count: 0, truncated: false }, error: null };
    for (const structuredContent of [noOrders, noTickets]) {
      const result = { isError: false, structuredContent };
      // When / then: a plain exporter's span is ok_empty; an explicit flag or item count still wins.
      expect(toolCallOf(errataToolSpan('list_orders', result)).outcome).toBe('ok_empty');
      expect(toolCallOf(errataToolSpan('list_orders', result, { empty: false })).outcome).toBe('ok');
      expect(toolCallOf(errataToolSpan('list_orders', result, { itemCount: 2 })).outcome).toBe('ok');
    }
    const oneOrder = { isError: false, structuredContent: { orders: [{ id: 'ORD-1' }] } };
    expect(toolCallOf(errataToolSpan('list_orders', oneOrder)).outcome).toBe('ok');
  });

  it('given an error text of JSON nested thousands deep, then it is stored without overflowing the stack', () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const span = errataToolSpan('t', { isError: true, content: [{ type: 'text', text: deep }] });
    const call = toolCallOf(span);
    expect(call.outcome).toBe('tool_error');
    expect(call.result.text).toContain('[REDACTED:nested]');
  });

  it('given the structured payload, then it stays valid JSON after redaction', () => {
    const span = errataToolSpan('t', {
      isError: true,
      structuredContent: { contact: 'jane@example.com', n: 2 },
    });
    expect(JSON.parse(toolCallOf(span).result.structured ?? '')).toEqual({
      contact: '[REDACTED:email]',
      n: 2,
    });
  });

  it('accepts execute_tool spans carrying MCP attributes, and takes the tool name from the span name', () => {
    const span = makeSpan({
      name: 'execute_tool get_weather',
      kind: SpanKind.INTERNAL,
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'mcp.session.id': 's' },
    });
    expect(toolCallOf(span)).toMatchObject({ tool: 'get_weather', source: 'semconv', outcome: 'ok' });
    const plainFunctionTool = makeSpan({
      name: 'execute_tool get_weather',
      kind: SpanKind.INTERNAL,
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_weather' },
    });
    expect(normalizeSpan(plainFunctionTool)).toBeNull();
  });

  it('drops SERVER-side tools/call spans (the client span reports the call)', () => {
    const span = makeSpan({
      name: 'tools/call t',
      kind: SpanKind.SERVER,
      attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 't' },
    });
    expect(normalizeSpan(span)).toBeNull();
  });

  it('falls back to the span name, then to (unknown), for the tool name', () => {
    const named = makeSpan({
      name: 'tools/call list_files',
      attributes: { 'mcp.method.name': 'tools/call' },
    });
    const unnamed = makeSpan({ name: 'tools/call', attributes: { 'mcp.method.name': 'tools/call' } });
    expect(toolCallOf(named).tool).toBe('list_files');
    expect(toolCallOf(unnamed).tool).toBe('(unknown)');
  });

  it('cuts names to MAX_NAME_BYTES (they are indexed keys), and drops a retry hint that is no span id or a negative token count', () => {
    const long = 'n'.repeat(3_000);
    const span = errataToolSpan(
      'x',
      { content: [] },
      {
        attributes: {
          'gen_ai.tool.name': long,
          'errata.server.name': long,
          'errata.server.version': long,
          'gen_ai.usage.input_tokens': -1_000,
          'gen_ai.usage.output_tokens': 20,
        },
      },
    );
    const call = toolCallOf(span);
    for (const name of [call.tool, call.server.name, call.server.version]) {
      expect(Buffer.byteLength(name!)).toBeLessThanOrEqual(MAX_NAME_BYTES);
      expect(name).toMatch(/^n+…\[truncated \d+ bytes\]$/);
    }
    expect(call.tokens).toBe(20);
    const hint = (value: string | number) =>
      toolCallOf(errataToolSpan('x', { content: [] }, { attributes: { 'errata.retry.of': value } })).retryHint
        .of;
    for (const value of ['not-a-span-id', 'abc', '   ', 123, `${sid(7)}0`]) expect(hint(value)).toBeNull();
    expect(hint(` ${sid(0xabc).toUpperCase()} `)).toBe(sid(0xabc));
  });

  it('given raw semconv arguments and no errata hash, then the hash is computed the SDK way', () => {
    const span = makeSpan({
      name: 'tools/call t',
      attributes: {
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.call.arguments': '{"b":1,"a":{"d":2,"c":3}}',
      },
    });
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe('{"a":{"c":3,"d":2},"b":1}');
    expect(toolCallOf(span).args).toEqual(argsFingerprint({ a: { c: 3, d: 2 }, b: 1 }));
    expect(toolCallOf(span).args.hash).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('normalizeSpan: other instrumentations', () => {
  it('given a Traceloop tool span, then its entity attributes give tool, result and isError', () => {
    const span = makeSpan({
      name: 'search_tickets.tool',
      status: { code: StatusCode.ERROR, message: 'Rate limit exceeded' },
      attributes: {
        'traceloop.span.kind': 'tool',
        'traceloop.entity.name': 'search_tickets',
        'traceloop.entity.input': JSON.stringify({ tool_name: 'search_tickets', arguments: { q: 'refund' } }),
        'traceloop.entity.output': JSON.stringify({ result: 'Rate limit exceeded', is_error: true }),
      },
    });
    const call = toolCallOf(span);
    expect(call).toMatchObject({ source: 'traceloop', tool: 'search_tickets', outcome: 'tool_error' });
    expect(call.result.text).toBe('Rate limit exceeded');
    expect(call.args.hash).toBe(argsFingerprint({ q: 'refund' }).hash);
  });

  it('keeps the result text another instrumentation sends only when the call failed, came back empty, or its result signals a failure (DOMAIN.md §5)', () => {
    const traceloop = (output: unknown) =>
      toolCallOf(
        makeSpan({
          name: 'get_customer.tool',
          attributes: {
            'traceloop.span.kind': 'tool',
            'traceloop.entity.name': 'get_customer',
            'traceloop.entity.output': JSON.stringify(output),
          },
        }),
      );
    const record = 'Customer: Jane Roe, 12 Elm Street, Springfield; diagnosis: type 2 diabetes';
    const success = traceloop({ result: record, is_error: false });
    expect(success.outcome).toBe('ok');
    expect(success.result).toMatchObject({ text: null, structured: null });

    const hidden = traceloop({ result: { ok: false, error: 'CRM unavailable' }, is_error: false });
    expect(hidden.outcome).toBe('ok');
    expect(hidden.result.text).toBe('{"ok":false,"error":"CRM unavailable"}');
    expect(classifyToolCall(hidden)).toMatchObject({ failureAsEmpty: true, evidence: 'failure:ok_false' });

    expect(traceloop({ result: record, is_error: true }).result.text).toBe(record);

    // What a producer sends as errata.result.* it sends by Errata's contract: every result only when opted in
    // (the SDK's captureResults), so it is kept as sent.
    const sent = (result: McpResult, init: ToolSpanInit = {}) =>
      toolCallOf(errataToolSpan('t', result, init));
    const structured = { customer: 'Jane Roe' };
    expect(
      sent({ content: [{ type: 'text', text: record }], structuredContent: structured }).result,
    ).toMatchObject({ text: record, structured: '{"customer":"Jane Roe"}' });
    const sentry = makeSpan({
      name: 'tools/call get_customer',
      kind: SpanKind.SERVER,
      attributes: { 'mcp.tool.name': 'get_customer', 'mcp.tool.result.content': record },
    });
    expect(toolCallOf(sentry).result.text).toBeNull();
  });

  it('given a Traceloop span with content capture on and no output (a result {content: []}), then ok_empty', () => {
    const traceloop = (attributes: Record<string, string>, status = { code: StatusCode.OK }) =>
      toolCallOf(
        makeSpan({
          name: 'search_tickets.tool',
          status,
          attributes: {
            'traceloop.span.kind': 'tool',
            'traceloop.entity.name': 'search_tickets',
            ...attributes,
          },
        }),
      );
    const input = {
      'traceloop.entity.input': JSON.stringify({ tool_name: 'search_tickets', arguments: {} }),
    };
    expect(traceloop(input).outcome).toBe('ok_empty');
    // Without content capture a missing output says nothing; neither does it on a call that failed.
    expect(traceloop({}).outcome).toBe('ok');
    expect(
      traceloop(input, { code: StatusCode.ERROR, message: 'MCP error -32001: Request timed out' }).outcome,
    ).toBe('timeout');
  });

  it('given a Traceloop ERROR span without output, then an McpError message decides, else it is an isError result', () => {
    const base = { name: 't.tool', attributes: { 'traceloop.span.kind': 'tool' } };
    const timeout = makeSpan({
      ...base,
      status: { code: StatusCode.ERROR, message: 'MCP error -32001: Request timed out' },
    });
    const isError = makeSpan({ ...base, status: { code: StatusCode.ERROR, message: 'Refund failed' } });
    expect(toolCallOf(timeout)).toMatchObject({ outcome: 'timeout', rpcStatusCode: '-32001' });
    expect(toolCallOf(isError)).toMatchObject({ outcome: 'tool_error', result: { isError: true } });
  });

  it('given a plain semconv span with the opt-in gen_ai.tool.call.result, then it is read as the result: empties, hidden failures, redacted', () => {
    const semconv = (tool: string, result: unknown) =>
      toolCallOf(
        makeSpan({
          name: `tools/call ${tool}`,
          attributes: {
            'mcp.method.name': 'tools/call',
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': tool,
            'gen_ai.tool.call.result': JSON.stringify(result),
          },
        }),
      );
    const text = (t: string) => ({ content: [{ type: 'text', text: t }] });
    expect(semconv('search_files', text('No matches found')).outcome).toBe('ok_empty');
    expect(semconv('empty', { content: [] }).outcome).toBe('ok_empty');
    // Data only in structuredContent, no text block: not empty
    expect(semconv('get_total', { content: [], structuredContent: { id: 7, total: 12 } }).outcome).toBe('ok');
    expect(semconv('search_nodes', text('{"entities":[],"relations":[]}')).outcome).toBe('ok_empty');
    const hidden = semconv('sync', text('Error: failed to reach billing, mail ops@example.com'));
    expect(hidden.outcome).toBe('ok');
    expect(hidden.result.text).toBe('Error: failed to reach billing, mail [REDACTED:email]');
    expect(classifyToolCall(hidden)).toMatchObject({ failureAsEmpty: true });
    // A plain success keeps no text, as with every other instrumentation's results.
    const success = semconv('get_customer', text('Jane Roe, 12 Elm Street'));
    expect(success).toMatchObject({ outcome: 'ok', result: { text: null } });
    expect(semconv('lookup', 'Order not reachable: error: upstream down').result.text).toBe(
      'Order not reachable: error: upstream down',
    );
  });

  it("given Traceloop's agent span (withAgent), then it is an agent run; a tool span inside it stays a tool call", () => {
    const agent = normalizeSpan(
      makeSpan({
        name: 'researcher.agent',
        attributes: {
          'traceloop.span.kind': 'agent',
          'traceloop.entity.name': 'researcher',
          'gen_ai.agent.name': 'researcher',
        },
      }),
    );
    expect(agent).toMatchObject({ type: 'AgentRunObserved', data: { agentName: 'researcher' } });
    const unnamed = normalizeSpan(
      makeSpan({
        name: 'x.agent',
        attributes: { 'traceloop.span.kind': 'agent', 'traceloop.entity.name': 'x' },
      }),
    );
    expect(unnamed).toMatchObject({ type: 'AgentRunObserved', data: { agentName: 'x' } });
    // Traceloop writes the agent's name on every span inside it: a tool span is still a tool call
    const tool = normalizeSpan(
      makeSpan({
        name: 'search_docs.tool',
        attributes: {
          'traceloop.span.kind': 'tool',
          'traceloop.entity.name': 'search_docs',
          'traceloop.entity.input': '{"tool":"search_docs","arguments":{}}',
          'gen_ai.agent.name': 'researcher',
        },
      }),
    );
    expect(tool?.type).toBe('ToolCallObserved');
  });

  it('given a Sentry server span, then it is accepted with mcp.tool.* and the server named by mcp.server.name', () => {
    const span = makeSpan({
      name: 'tools/call list_files',
      kind: SpanKind.SERVER,
      resource: { 'service.name': 'fs-server' },
      attributes: {
        'mcp.method.name': 'tools/call',
        'mcp.tool.name': 'list_files',
        'mcp.tool.result.is_error': false,
        'mcp.tool.result.content_count': 0,
        'mcp.request.id': '3',
        'mcp.request.argument.path': '"/tmp"',
      },
    });
    const call = toolCallOf(span);
    expect(call).toMatchObject({ source: 'sentry', tool: 'list_files', outcome: 'ok_empty' });
    expect(call.server.name).toBe('fs-server');
    expect(call.mcp.requestId).toBe('3');
    expect(call.args.hash).toBe(argsFingerprint({ path: '/tmp' }).hash);
  });

  it('given a Sentry JSON-RPC error (status internal_error, no result), then protocol_error', () => {
    const span = makeSpan({
      name: 'tools/call t',
      kind: SpanKind.SERVER,
      status: { code: StatusCode.ERROR, message: 'internal_error' },
      attributes: { 'mcp.method.name': 'tools/call', 'mcp.tool.name': 't', 'mcp.server.name': 'srv' },
    });
    expect(toolCallOf(span)).toMatchObject({ outcome: 'protocol_error', server: { name: 'srv' } });
  });

  it('given a Sentry server span of a call the client cancelled (status ERROR "cancelled"), then timeout, transient', () => {
    const sentry = (tool: string, message: string) =>
      toolCallOf(
        makeSpan({
          name: `tools/call ${tool}`,
          kind: SpanKind.SERVER,
          status: { code: StatusCode.ERROR, message },
          attributes: { 'mcp.method.name': 'tools/call', 'mcp.tool.name': tool, 'mcp.server.name': 'srv' },
        }),
      );
    const cancelled = sentry('slow_report', 'cancelled');
    expect(cancelled.outcome).toBe('timeout');
    expect(classifyToolCall(cancelled).category).toBe('transient');
    // A tool's own words about cancelling are no cancellation.
    expect(sentry('cancel_order', 'Order cannot be cancelled after shipment').outcome).toBe('protocol_error');
  });
});

describe('normalizeSpan: agent runs, escalations, subagent reports', () => {
  it('cuts an agent name, id and conversation id to MAX_NAME_BYTES', () => {
    const long = 'a'.repeat(20_000);
    const span = makeSpan({
      name: `invoke_agent ${long}`,
      kind: SpanKind.INTERNAL,
      attributes: { 'gen_ai.agent.id': long, 'gen_ai.conversation.id': long },
    });
    const run = normalizeSpan(span);
    if (run?.type !== 'AgentRunObserved') throw new Error('not a run');
    for (const name of [run.data.agentName, run.data.agentId, run.data.conversationId]) {
      expect(Buffer.byteLength(name!)).toBeLessThanOrEqual(MAX_NAME_BYTES);
    }
  });

  it('redacts the conversation id: an exporter may put a user’s address or a token in it', () => {
    const span = makeSpan({
      name: 'invoke_agent support',
      kind: SpanKind.INTERNAL,
      attributes: { 'gen_ai.conversation.id': 'conv-alice.secret@example.com token=abc123def456' },
    });
    const run = normalizeSpan(span);
    if (run?.type !== 'AgentRunObserved') throw new Error('not a run');
    expect(run.data.conversationId).toBe('[REDACTED:email] token=[REDACTED:secret]');
  });

  it('given an invoke_agent span, then AgentRunObserved with name, id, conversation and role', () => {
    const span = makeSpan({
      name: 'invoke_agent researcher',
      kind: SpanKind.INTERNAL,
      attributes: {
        'gen_ai.agent.id': 'ag-1',
        'gen_ai.conversation.id': 'conv-9',
        'errata.agent.role': 'subagent',
      },
    });
    expect(normalizeSpan(span)).toEqual({
      type: 'AgentRunObserved',
      data: {
        span: expect.objectContaining({ spanId: sid(1) }),
        agentName: 'researcher',
        agentId: 'ag-1',
        conversationId: 'conv-9',
        role: 'subagent',
      },
    });
    const byOperation = makeSpan({
      name: 'run',
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'errata.agent.role': 'boss' },
    });
    expect(normalizeSpan(byOperation)).toMatchObject({
      type: 'AgentRunObserved',
      data: { agentName: null, role: null },
    });
  });

  it('given an escalation with a valid target, then EscalationObserved with the reason redacted', () => {
    const span = makeSpan({
      name: 'errata.escalation',
      kind: SpanKind.INTERNAL,
      attributes: {
        'errata.escalation.target': 'Human',
        'errata.escalation.reason': 'refund for jane@example.com',
      },
    });
    expect(normalizeSpan(span)).toMatchObject({
      type: 'EscalationObserved',
      data: { target: 'human', reason: 'refund for [REDACTED:email]' },
    });
  });

  it('given an escalation with a missing or unknown target, then null', () => {
    expect(normalizeSpan(makeSpan({ name: 'errata.escalation', kind: SpanKind.INTERNAL }))).toBeNull();
    const manager = makeSpan({
      name: 'errata.escalation',
      attributes: { 'errata.escalation.target': 'manager' },
    });
    expect(normalizeSpan(manager)).toBeNull();
  });

  it('given the seed 003 subagent report, then SubagentReportObserved with every element', () => {
    const span = makeSpan({
      name: 'errata.subagent_report',
      kind: SpanKind.INTERNAL,
      attributes: {
        'errata.subagent.status': 'partial',
        'errata.subagent.completed': 6,
        'errata.subagent.total': '8',
        'errata.subagent.attempted': [
          '3 retries with exponential backoff (1s, 2s, 4s)',
          'fallback to cached results — none available',
        ],
        'errata.subagent.alternatives': JSON.stringify([
          'proceed with the 6 completed queries and flag reduced coverage',
          're-delegate queries 3 and 7 after the rate-limit window resets',
        ]),
        'errata.subagent.partial_results': JSON.stringify({
          completedQueries: 6,
          totalQueries: 8,
          sources: ['src_101', 'src_102'],
          owner: 'jane@example.com',
        }),
        'errata.error.category': 'transient',
        'errata.error.retryable': true,
      },
    });
    expect(normalizeSpan(span)).toMatchObject({
      type: 'SubagentReportObserved',
      data: {
        status: 'partial',
        completed: 6,
        total: 8,
        attempted: [
          '3 retries with exponential backoff (1s, 2s, 4s)',
          'fallback to cached results — none available',
        ],
        alternatives: [
          'proceed with the 6 completed queries and flag reduced coverage',
          're-delegate queries 3 and 7 after the rate-limit window resets',
        ],
        partialResults:
          '{"completedQueries":6,"totalQueries":8,"sources":["src_101","src_102"],"owner":"[REDACTED:email]"}',
        category: 'transient',
        retryable: true,
      },
    });
    const counted = makeSpan({
      name: 'errata.subagent_report',
      attributes: { 'errata.subagent.status': 'complete', 'errata.subagent.partial_results': 4 },
    });
    expect(normalizeSpan(counted)).toMatchObject({
      data: { status: 'complete', partialResults: 4, attempted: null },
    });
  });

  it('given a subagent report with an unknown status, then null', () => {
    const span = makeSpan({
      name: 'errata.subagent_report',
      attributes: { 'errata.subagent.status': 'done' },
    });
    expect(normalizeSpan(span)).toBeNull();
  });

  it('given any other span, then null', () => {
    expect(normalizeSpan(makeSpan({ name: 'GET /orders', kind: SpanKind.SERVER }))).toBeNull();
    expect(
      normalizeSpan(makeSpan({ name: 'tools/list', attributes: { 'mcp.method.name': 'tools/list' } })),
    ).toBeNull();
    expect(
      normalizeSpan(makeSpan({ name: 'chat gpt-5', attributes: { 'gen_ai.operation.name': 'chat' } })),
    ).toBeNull();
  });
});
