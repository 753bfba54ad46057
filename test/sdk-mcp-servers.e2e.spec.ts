/**
 * @errata/sdk on real MCP servers from npm, over stdio and Streamable HTTP: the exact span of each kind of
 * outcome — success, valid empty, tool errors (permission, validation), protocol error, timeout, closed
 * connection — and what Errata makes of it after the OTLP round trip.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { argsFingerprint, classifyToolCall, type ToolCallData } from '@errata/domain';
import { instrumentMcpClient, recordEscalation, withAgentRun } from '@errata/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registerTestTracing, toEvents, type TestTracing } from '../libs/sdk/src/tracing.spec-helper';
import { startFaultyProxy } from './support/faulty-http-proxy';
import {
  connectStdio,
  NPM_SERVER_ENTRIES,
  startEverythingHttp,
  type StdioServer,
} from './support/npm-mcp-servers';

let tracing: TestTracing;
let dir: string;
let everything: StdioServer;
let filesystem: StdioServer;
let memory: StdioServer;

beforeAll(async () => {
  tracing = registerTestTracing();
  dir = await mkdtemp(join(tmpdir(), 'errata-sdk-'));
  await writeFile(join(dir, 'notes.txt'), 'hello from the allowed directory');
  // Instrumented before connecting, as a runtime would: the handshake gives the protocol version.
  const instrument = (client: Client) => void instrumentMcpClient(client);
  [everything, filesystem, memory] = await Promise.all([
    connectStdio('everything', ['stdio'], {}, instrument),
    connectStdio('filesystem', [dir], {}, instrument),
    connectStdio('memory', [], { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') }, instrument),
  ]);
});
afterAll(async () => {
  await Promise.all([everything, filesystem, memory].map((server) => server?.close()));
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => tracing.reset());

function onlySpan(): ReadableSpan {
  const spans = tracing.spans();
  expect(spans).toHaveLength(1);
  return spans[0]!;
}

function toolCallOf(span: ReadableSpan): ToolCallData {
  const [event] = toEvents([span]);
  if (event?.type !== 'ToolCallObserved') throw new Error(`not a tool call: ${JSON.stringify(event)}`);
  return event.data;
}

/** The attributes every stdio tools/call span carries, before the outcome. */
function requestAttributes(
  tool: string,
  args: unknown,
  server: { name: string; version: string },
  requestId: string,
): Record<string, unknown> {
  const fingerprint = argsFingerprint(args);
  return {
    'mcp.method.name': 'tools/call',
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': tool,
    'errata.server.name': server.name,
    'errata.server.version': server.version,
    'network.transport': 'pipe',
    'mcp.protocol.version': '2025-11-25',
    'errata.args.hash': fingerprint.hash,
    'errata.args.size': fingerprint.size,
    'jsonrpc.request.id': requestId,
  };
}

const serverInfo = (server: StdioServer) =>
  server.client.getServerVersion() as { name: string; version: string };
const requestIdOf = (span: ReadableSpan) => span.attributes['jsonrpc.request.id'] as string;

describe('server-everything over stdio', () => {
  it('success: echo', async () => {
    const args = { message: 'hello' };
    await everything.client.callTool({ name: 'echo', arguments: args });
    const span = onlySpan();
    expect(span.name).toBe('tools/call echo');
    expect(span.kind).toBe(SpanKind.CLIENT);
    expect(span.status).toEqual({ code: 0 });
    expect(span.attributes).toEqual({
      ...requestAttributes('echo', args, serverInfo(everything), requestIdOf(span)),
      'errata.result.is_error': false,
      'errata.result.empty': false,
    });
    expect(requestIdOf(span)).toMatch(/^\d+$/);
    expect(serverInfo(everything).name).toBe('mcp-servers/everything');
    expect(toolCallOf(span).outcome).toBe('ok');
  });

  it('validation: get-sum with a string where a number belongs', async () => {
    const args = { a: 'one', b: 2 };
    await everything.client.callTool({ name: 'get-sum', arguments: args });
    const span = onlySpan();
    const text = span.attributes['errata.result.text'] as string;
    expect(text).toMatch(/^MCP error -32602: Input validation error: Invalid arguments for tool get-sum/);
    expect(span.status).toEqual({ code: 2 });
    expect(span.attributes).toEqual({
      ...requestAttributes('get-sum', args, serverInfo(everything), requestIdOf(span)),
      'error.type': 'tool_error',
      'errata.result.is_error': true,
      'errata.result.empty': false,
      'errata.result.text': text,
    });
    const call = toolCallOf(span);
    expect(call.outcome).toBe('tool_error');
    expect(classifyToolCall(call)).toMatchObject({ category: 'validation' });
  });

  it('timeout: the client gives up on a long-running operation', async () => {
    const args = { duration: 5, steps: 5 };
    const failure = await everything.client
      .callTool({ name: 'trigger-long-running-operation', arguments: args }, undefined, { timeout: 200 })
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: -32001 });
    const span = onlySpan();
    expect(span.status).toEqual({ code: 2, message: 'MCP error -32001: Request timed out' });
    expect(span.attributes).toEqual({
      ...requestAttributes('trigger-long-running-operation', args, serverInfo(everything), requestIdOf(span)),
      'error.type': 'timeout',
    });
    expect(toolCallOf(span).outcome).toBe('timeout');
  });

  it('cancelled: the host aborts a long-running operation (AbortError, not the -32001 the SDK rejects with; Errata counts the client giving up as a timeout)', async () => {
    const args = { duration: 5, steps: 5 };
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const failure = await everything.client
      .callTool({ name: 'trigger-long-running-operation', arguments: args }, undefined, {
        signal: controller.signal,
      })
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({
      code: -32001,
      message: 'MCP error -32001: AbortError: This operation was aborted',
    });
    const span = onlySpan();
    expect(span.status).toEqual({ code: 2, message: 'AbortError: This operation was aborted' });
    expect(span.attributes).toEqual({
      ...requestAttributes('trigger-long-running-operation', args, serverInfo(everything), requestIdOf(span)),
      'error.type': 'AbortError',
    });
    expect(toolCallOf(span).outcome).toBe('timeout');
  });
});

describe.each([
  ['', false],
  [', the client called through a Proxy (as LangChain MultiServerMCPClient hands it out)', true],
])(
  'a server that asks the client to sample in the middle of a call (server-everything over stdio)%s',
  (_, proxied) => {
    it("the handler's own tool call and escalation belong to that call and its run, not to the run that connected", async () => {
      const client = instrumentMcpClient(
        new Client({ name: 'errata-sdk-test', version: '1.0.0' }, { capabilities: { sampling: {} } }),
      );
      client.setRequestHandler(CreateMessageRequestSchema, async () => {
        await client.callTool({ name: 'echo', arguments: { message: 'looked up while sampling' } });
        recordEscalation({ target: 'human', reason: 'the model is unsure' });
        return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'sampled' } };
      });
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [NPM_SERVER_ENTRIES.everything, 'stdio'],
        stderr: 'ignore',
      });
      // Given a client connected inside one run (the SDK hands the server's requests over in connect()'s context)
      await withAgentRun({ name: 'setup' }, () => client.connect(transport));
      // When a call in a later run makes the server ask for a sample
      // (connected as itself, called through the Proxy: the server's requests come to the client itself)
      const caller = proxied
        ? new Proxy(client, { get: (target, key) => target[key as keyof Client] })
        : client;
      await withAgentRun({ name: 'turn' }, () =>
        caller.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 10 } }),
      );
      await client.close();
      // Then what the sampling handler did hangs off that call, in its trace and run
      const spans = tracing.spans();
      const named = (name: string) => spans.find((span) => span.name === name)!;
      const outer = named('tools/call trigger-sampling-request');
      expect(outer.parentSpanContext?.spanId).toBe(named('invoke_agent turn').spanContext().spanId);
      for (const inner of [named('tools/call echo'), named('errata.escalation')]) {
        expect(inner.spanContext().traceId).toBe(outer.spanContext().traceId);
        expect(inner.parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
      }
    });
  },
);

describe('server-filesystem over stdio', () => {
  it('permission: a path outside the allowed directories', async () => {
    const args = { path: '/etc/hostname' };
    await filesystem.client.callTool({ name: 'read_text_file', arguments: args });
    const span = onlySpan();
    expect(span.attributes).toMatchObject({
      ...requestAttributes('read_text_file', args, serverInfo(filesystem), requestIdOf(span)),
      'error.type': 'tool_error',
      'errata.result.is_error': true,
    });
    expect(span.attributes['errata.result.text']).toMatch(
      /^Access denied - path outside allowed directories: \/etc\/hostname not in /,
    );
    const call = toolCallOf(span);
    expect(call.outcome).toBe('tool_error');
    expect(classifyToolCall(call)).toMatchObject({ category: 'permission', source: 'text' });
  });

  it('success with structured content mirrored in text', async () => {
    await filesystem.client.callTool({ name: 'read_text_file', arguments: { path: join(dir, 'notes.txt') } });
    expect(onlySpan().attributes).toMatchObject({
      'errata.result.is_error': false,
      'errata.result.empty': false,
      'errata.result.text_mirror': false,
    });
  });

  it('valid empty: a search with no matches', async () => {
    await filesystem.client.callTool({
      name: 'search_files',
      arguments: { path: dir, pattern: 'zzz-nothing' },
    });
    const span = onlySpan();
    expect(span.attributes).toMatchObject({ 'errata.result.empty': true, 'errata.result.item_count': 0 });
    expect(toolCallOf(span).outcome).toBe('ok_empty');
  });
});

describe('server-memory over stdio', () => {
  it('valid empty: search_nodes without a match sends the empty result; with a match, nothing but the outcome', async () => {
    await memory.client.callTool({ name: 'search_nodes', arguments: { query: 'nobody' } });
    const empty = onlySpan();
    expect(empty.attributes).toMatchObject({
      'errata.result.is_error': false,
      'errata.result.empty': true,
      'errata.result.item_count': 0,
      'errata.result.text_mirror': true,
      'errata.result.structured': '{"entities":[],"relations":[]}',
    });
    expect(toolCallOf(empty).outcome).toBe('ok_empty');

    await memory.client.callTool({
      name: 'create_entities',
      arguments: { entities: [{ name: 'Ada', entityType: 'person', observations: ['writes programs'] }] },
    });
    tracing.reset();
    await memory.client.callTool({ name: 'search_nodes', arguments: { query: 'Ada' } });
    const found = onlySpan();
    expect(found.attributes).toMatchObject({
      'errata.result.empty': false,
      'errata.result.text_mirror': true,
    });
    expect(found.attributes['errata.result.structured']).toBeUndefined();
    expect(toolCallOf(found).outcome).toBe('ok');
  });

  it('captureResults: a graph whose data says "Login error: code N", over 2 KiB, is no hidden failure on either side', async () => {
    // Its text mirror, cut at 2 KiB, no longer parses: read as a message, its data said the call failed.
    const capturing = await connectStdio(
      'memory',
      [],
      { MEMORY_FILE_PATH: join(dir, 'memory-capture.jsonl') },
      (client) => void instrumentMcpClient(client, { captureResults: true }),
    );
    try {
      await capturing.client.callTool({
        name: 'create_entities',
        arguments: {
          entities: Array.from({ length: 30 }, (_, i) => ({
            name: `ticket-${i}`,
            entityType: 'ticket',
            observations: [`Customer reported: Login error: code ${i}`],
          })),
        },
      });
      tracing.reset();
      await capturing.client.callTool({ name: 'read_graph', arguments: {} });
      const span = onlySpan();
      expect(span.attributes).toMatchObject({
        'errata.result.is_error': false,
        'errata.result.text_mirror': true,
      });
      expect(span.attributes['error.type']).toBeUndefined();
      expect(span.attributes['errata.result.text']).toMatch(/…\[truncated \d+ bytes\]$/);
      const call = toolCallOf(span);
      expect(call.outcome).toBe('ok');
      expect(classifyToolCall(call)).toMatchObject({ failed: false, failureAsEmpty: false, evidence: null });
    } finally {
      await capturing.close();
    }
  });

  it('protocol-level failure inside a result: an unknown tool (SDK 1.x servers answer isError)', async () => {
    await memory.client.callTool({ name: 'no_such_tool', arguments: {} });
    const span = onlySpan();
    expect(span.attributes['errata.result.text']).toBe('MCP error -32602: Tool no_such_tool not found');
    const call = toolCallOf(span);
    expect(call.outcome).toBe('tool_error');
    expect(classifyToolCall(call)).toMatchObject({
      category: 'validation',
      source: 'code',
      evidence: 'jsonrpc:-32602',
    });
  });
});

describe('a closed connection', () => {
  it('the server process dies during a call: transport error -32000', async () => {
    const doomed = await connectStdio(
      'everything',
      ['stdio'],
      {},
      (client) => void instrumentMcpClient(client),
    );
    try {
      const pending = doomed.client
        .callTool({ name: 'trigger-long-running-operation', arguments: { duration: 10, steps: 10 } })
        .catch((error: unknown) => error);
      await new Promise((resolve) => setTimeout(resolve, 300));
      process.kill(doomed.transport.pid!, 'SIGKILL');
      expect(await pending).toMatchObject({ code: -32000 });
      const span = onlySpan();
      expect(span.status).toEqual({ code: 2, message: 'MCP error -32000: Connection closed' });
      expect(span.attributes['error.type']).toBe('-32000');
      expect(span.attributes['rpc.response.status_code']).toBeUndefined();
      expect(toolCallOf(span).outcome).toBe('transport_error');
    } finally {
      await doomed.close().catch(() => undefined);
    }
  });
});

describe('server-everything over Streamable HTTP', () => {
  it('records the HTTP transport, the server address and the session', async () => {
    const server = await startEverythingHttp();
    const client = instrumentMcpClient(new Client({ name: 'errata-sdk-test', version: '1.0.0' }));
    try {
      const transport = new StreamableHTTPClientTransport(server.url);
      await client.connect(transport);
      const args = { a: 2, b: 3 };
      const result = await client.callTool({ name: 'get-sum', arguments: args });
      expect(result.content).toEqual([{ type: 'text', text: 'The sum of 2 and 3 is 5.' }]);
      const span = onlySpan();
      expect(span.attributes).toEqual({
        'mcp.method.name': 'tools/call',
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'get-sum',
        'errata.server.name': 'mcp-servers/everything',
        'errata.server.version': (client.getServerVersion() as { version: string }).version,
        'network.transport': 'tcp',
        'network.protocol.name': 'http',
        'server.address': '127.0.0.1',
        'server.port': Number(server.url.port),
        'mcp.session.id': transport.sessionId,
        'mcp.protocol.version': '2025-11-25',
        'errata.args.hash': argsFingerprint(args).hash,
        'errata.args.size': argsFingerprint(args).size,
        'jsonrpc.request.id': requestIdOf(span),
        'errata.result.is_error': false,
        'errata.result.empty': false,
      });
      expect(transport.sessionId).toMatch(/\S/);
      expect(toolCallOf(span).mcp).toMatchObject({ transport: 'tcp', sessionId: transport.sessionId });
    } finally {
      await client.close();
      server.stop();
    }
  });
});

describe('an HTTP error status answered to a Streamable HTTP client: a transport error, with the status', () => {
  let server: Awaited<ReturnType<typeof startEverythingHttp>>;
  let proxy: Awaited<ReturnType<typeof startFaultyProxy>>;
  beforeAll(async () => {
    server = await startEverythingHttp();
    proxy = await startFaultyProxy(server.url);
  });
  afterAll(async () => {
    await proxy?.close();
    server?.stop();
  });

  async function failedCall(
    connectTo: URL,
    beforeCall: (transport: StreamableHTTPClientTransport) => unknown,
  ) {
    const client = instrumentMcpClient(new Client({ name: 'errata-sdk-test', version: '1.0.0' }));
    const transport = new StreamableHTTPClientTransport(connectTo);
    await client.connect(transport);
    client.onerror = () => undefined; // the SDK also reports a failed POST there
    try {
      await beforeCall(transport);
      const thrown = await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(thrown).toBeInstanceOf(StreamableHTTPError);
      return onlySpan();
    } finally {
      await client.close();
    }
  }

  it('the server ended the session: 400 with the JSON-RPC -32000 it answers unknown sessions, transient', async () => {
    const span = await failedCall(server.url, (transport) =>
      fetch(server.url, { method: 'DELETE', headers: { 'mcp-session-id': transport.sessionId! } }),
    );
    expect(span.attributes).toMatchObject({
      'error.type': 'StreamableHTTPError',
      'http.response.status_code': 400,
    });
    expect(span.attributes['rpc.response.status_code']).toBeUndefined();
    expect(span.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: expect.stringMatching(
        /^Streamable HTTP error: Error POSTing to endpoint: .*Bad Request: No valid session ID provided/,
      ),
    });
    const call = toolCallOf(span);
    expect(call.outcome).toBe('transport_error');
    expect(classifyToolCall(call)).toMatchObject({ category: 'transient', evidence: 'jsonrpc:-32000' });
  });

  it.each([
    ['a proxy answers 503: transient, by the status', 503, 'Service Unavailable', 'transient'],
    [
      'a gateway answers 401 and the client has no auth provider: permission, not transient',
      401,
      '',
      'permission',
    ],
  ])('%s', async (_case, status, body, category) => {
    const span = await failedCall(proxy.url, () => proxy.failNextPost(status, body));
    expect(span.attributes).toMatchObject({
      'error.type': 'StreamableHTTPError',
      'http.response.status_code': status,
    });
    const call = toolCallOf(span);
    expect(call.outcome).toBe('transport_error');
    expect(classifyToolCall(call)).toMatchObject({ category, source: 'code', evidence: `http:${status}` });
  });
});
