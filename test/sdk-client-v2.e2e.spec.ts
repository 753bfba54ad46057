/**
 * @errata/sdk on the MCP TypeScript SDK's v2 client (`@modelcontextprotocol/client`, which `@openai/agents` 0.15 and
 * later use): each call is made by a 1.x client and a v2 client connected to the same real server, and the v2
 * client's span must be the 1.x client's. Over stdio and Streamable HTTP (server-everything from npm), the trace
 * context in `_meta` (the seed fixture server), and module patching in CommonJS and ESM child processes.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { classifyToolCall, type ToolCallData } from '@errata/domain';
import { instrumentMcpClient } from '@errata/sdk';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpTransportV2,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioTransportV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV2First } from 'mcp-client-v2.0';
import { StdioClientTransport as StdioTransportV2First } from 'mcp-client-v2.0/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registerTestTracing, toEvents, type TestTracing } from '../libs/sdk/src/tracing.spec-helper';
import {
  connectStdio,
  NPM_SERVER_ENTRIES,
  startEverythingHttp,
  type StdioServer,
} from './support/npm-mcp-servers';
import { startFaultyProxy } from './support/faulty-http-proxy';
import { startOtlpReceiver } from './support/otlp-receiver';
import { seedServer } from './support/seed-mcp-server';

const run = promisify(execFile);
const FIXTURES = join(__dirname, 'fixtures/sdk-client-v2');

let tracing: TestTracing;
beforeAll(() => {
  tracing = registerTestTracing();
});
beforeEach(() => tracing.reset());

interface CallArgs {
  readonly name: string;
  readonly arguments?: unknown;
}

/** The one span `call` records, and what the call returned or threw. */
async function spanOf(call: () => Promise<unknown>): Promise<{ span: ReadableSpan; outcome: unknown }> {
  tracing.reset();
  const outcome = await call().catch((error: unknown) => error);
  const spans = tracing.spans();
  expect(spans.map((span) => span.name)).toHaveLength(1);
  return { span: spans[0]!, outcome };
}

/** The 1.x client's span and the v2 client's for the same call (each `callTool` takes the options where it does). */
async function spansOfBoth(
  v1: Client,
  v2: ClientV2,
  params: CallArgs,
  options?: { timeout: number },
): Promise<[ReadableSpan, ReadableSpan]> {
  const { span: first } = await spanOf(() => v1.callTool(params as never, undefined, options));
  const { span: second } = await spanOf(() => v2.callTool(params as never, options));
  return [first, second];
}

function expectSameSpan(v1: ReadableSpan, v2: ReadableSpan) {
  expect(v2.name).toBe(v1.name);
  expect(v2.kind).toBe(SpanKind.CLIENT);
  expect(v2.attributes).toEqual(v1.attributes);
  expect(v2.status).toEqual(v1.status);
  expect(toolCallOf(v2)).toEqual(toolCallOf(v1));
}

function storedCall(span: ReadableSpan): ToolCallData {
  const [event] = toEvents([span]);
  if (event?.type !== 'ToolCallObserved') throw new Error(`not a tool call: ${JSON.stringify(event)}`);
  return event.data;
}

/** What Errata stores of the call, but for the span's own ids and times. */
function toolCallOf(span: ReadableSpan): Record<string, unknown> {
  const { span: _ids, ...call } = storedCall(span);
  return call;
}

/**
 * The v2 releases the stdio calls are made with: the one the other tests use, and 2.0.0 (an npm alias in
 * devDependencies), the first the SDK's `^2.0.0` range takes. Its client is typed as the newer one's: it has the
 * methods these tests call.
 */
const V2_RELEASES = [
  { release: '2.4.0', V2Client: ClientV2, V2Stdio: StdioTransportV2 },
  {
    release: '2.0.0',
    V2Client: ClientV2First as unknown as typeof ClientV2,
    V2Stdio: StdioTransportV2First as unknown as typeof StdioTransportV2,
  },
];

describe.each(V2_RELEASES)(
  'server-everything over stdio, a 1.x client and a v2 $release client side by side',
  ({ V2Client, V2Stdio }) => {
    let v1: StdioServer;
    let v2: ClientV2;
    beforeAll(async () => {
      v1 = await connectStdio('everything', ['stdio'], {}, (client) => void instrumentMcpClient(client));
      // Instrumented before connecting, as for 1.x: both clients then send the same request ids.
      v2 = instrumentMcpClient(new V2Client({ name: 'errata-sdk-test', version: '1.0.0' }));
      await v2.connect(
        new V2Stdio({
          command: process.execPath,
          args: [NPM_SERVER_ENTRIES.everything, 'stdio'],
          stderr: 'ignore',
        }),
      );
    });
    afterAll(async () => {
      await v1?.close();
      await v2?.close();
    });

    it('success: the same span, with the request id, protocol version and server', async () => {
      const [first, second] = await spansOfBoth(v1.client, v2, {
        name: 'echo',
        arguments: { message: 'hi' },
      });
      expectSameSpan(first, second);
      expect(second.attributes).toMatchObject({
        'jsonrpc.request.id': expect.stringMatching(/^\d+$/),
        'mcp.protocol.version': '2025-11-25',
        'errata.server.name': 'mcp-servers/everything',
        'network.transport': 'pipe',
        'errata.result.is_error': false,
      });
    });

    it('tool error: get-sum with a string where a number belongs', async () => {
      const [first, second] = await spansOfBoth(v1.client, v2, {
        name: 'get-sum',
        arguments: { a: 'one', b: 2 },
      });
      expectSameSpan(first, second);
      expect(second.attributes).toMatchObject({ 'error.type': 'tool_error', 'errata.result.is_error': true });
    });

    it('protocol error: arguments that are not an object, answered with JSON-RPC -32603 (a ProtocolError in v2)', async () => {
      const [first, second] = await spansOfBoth(v1.client, v2, { name: 'echo', arguments: 'not an object' });
      expectSameSpan(first, second);
      expect(second.attributes).toMatchObject({
        'error.type': '-32603',
        'rpc.response.status_code': '-32603',
      });
      expect(toolCallOf(second)['outcome']).toBe('protocol_error');
    });

    it("timeout: the client's own (an SdkError REQUEST_TIMEOUT in v2, -32001 in 1.x)", async () => {
      const params = { name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 5 } };
      const [first, second] = await spansOfBoth(v1.client, v2, params, { timeout: 200 });
      expect(second.attributes).toEqual(first.attributes);
      expect(second.attributes['error.type']).toBe('timeout');
    });

    it("cancelled by the host's signal, given in v2's callTool(params, options): AbortError as for 1.x", async () => {
      const params = { name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 5 } };
      const abortedSoon = () => {
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 100);
        return controller.signal;
      };
      const { span: first } = await spanOf(() =>
        v1.client.callTool(params, undefined, { signal: abortedSoon() }),
      );
      const { span: second } = await spanOf(() => v2.callTool(params, { signal: abortedSoon() }));
      expectSameSpan(first, second);
      expect(second.attributes['error.type']).toBe('AbortError');
    });
  },
);

describe('a closed connection', () => {
  it('the server process dies during a call: an SdkError CONNECTION_CLOSED in v2, the transport error -32000 as for 1.x', async () => {
    const transport = new StdioTransportV2({
      command: process.execPath,
      args: [NPM_SERVER_ENTRIES.everything, 'stdio'],
      stderr: 'ignore',
    });
    const client = instrumentMcpClient(new ClientV2({ name: 'errata-sdk-test', version: '1.0.0' }));
    await client.connect(transport);
    try {
      const { span, outcome } = await spanOf(async () => {
        const pending = client.callTool({
          name: 'trigger-long-running-operation',
          arguments: { duration: 10, steps: 10 },
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
        process.kill(transport.pid!, 'SIGKILL');
        return pending;
      });
      expect(outcome).toMatchObject({ code: 'CONNECTION_CLOSED' });
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'Connection closed' });
      expect(span.attributes['error.type']).toBe('-32000');
      expect(span.attributes['rpc.response.status_code']).toBeUndefined();
      expect(storedCall(span).outcome).toBe('transport_error');
    } finally {
      await client.close().catch(() => undefined);
    }
  });
});

describe('server-everything over Streamable HTTP, a 1.x client and a v2 client side by side', () => {
  let server: Awaited<ReturnType<typeof startEverythingHttp>>;
  let v1: Client;
  let v2: ClientV2;
  let v2Transport: HttpTransportV2;
  beforeAll(async () => {
    server = await startEverythingHttp();
    v1 = instrumentMcpClient(new Client({ name: 'errata-sdk-test', version: '1.0.0' }));
    await v1.connect(new StreamableHTTPClientTransport(server.url));
    v2 = instrumentMcpClient(new ClientV2({ name: 'errata-sdk-test', version: '1.0.0' }));
    v2Transport = new HttpTransportV2(server.url);
    await v2.connect(v2Transport);
  });
  afterAll(async () => {
    await v1?.close();
    await v2?.close();
    server?.stop();
  });

  /** The same span but for the session, each client's own. */
  function expectSameSpanButSession(first: ReadableSpan, second: ReadableSpan) {
    expect(second.attributes['mcp.session.id']).toBe(v2Transport.sessionId);
    expect(second.attributes['mcp.session.id']).not.toBe(first.attributes['mcp.session.id']);
    expect(second.attributes).toEqual({ ...first.attributes, 'mcp.session.id': v2Transport.sessionId });
    expect(second.status).toEqual(first.status);
    expect(second.name).toBe(first.name);
  }

  it.each<[string, CallArgs, string]>([
    ['success', { name: 'get-sum', arguments: { a: 2, b: 3 } }, 'ok'],
    ['tool error', { name: 'get-sum', arguments: { a: 'one', b: 2 } }, 'tool_error'],
    ['protocol error', { name: 'echo', arguments: 'not an object' }, 'protocol_error'],
  ])(
    '%s: the same span, with the HTTP transport, the server address and the session',
    async (_, params, outcome) => {
      const [first, second] = await spansOfBoth(v1, v2, params);
      expectSameSpanButSession(first, second);
      expect(second.attributes).toMatchObject({
        'jsonrpc.request.id': expect.stringMatching(/^\d+$/),
        'mcp.protocol.version': '2025-11-25',
        'network.transport': 'tcp',
        'network.protocol.name': 'http',
        'server.address': '127.0.0.1',
        'server.port': Number(server.url.port),
      });
      expect(toolCallOf(second)['outcome']).toBe(outcome);
    },
  );
});

describe('an HTTP error status answered to the Streamable HTTP transport, a 1.x client and a v2 client side by side', () => {
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

  /** Each client connected, then its call failed as `beforeCall` makes it fail. */
  async function failedCalls(
    connectTo: URL,
    beforeCall: (sessionId: string) => unknown,
  ): Promise<[ReadableSpan, ReadableSpan]> {
    const v1 = instrumentMcpClient(new Client({ name: 'errata-sdk-test', version: '1.0.0' }));
    const v1Transport = new StreamableHTTPClientTransport(connectTo);
    const v2 = instrumentMcpClient(new ClientV2({ name: 'errata-sdk-test', version: '1.0.0' }));
    const v2Transport = new HttpTransportV2(connectTo);
    await v1.connect(v1Transport);
    await v2.connect(v2Transport);
    // The SDKs also report a failed POST there.
    v1.onerror = () => undefined;
    v2.onerror = () => undefined;
    try {
      const params = { name: 'get-sum', arguments: { a: 1, b: 2 } };
      await beforeCall(v1Transport.sessionId!);
      const first = await spanOf(() => v1.callTool(params));
      await beforeCall(v2Transport.sessionId!);
      const second = await spanOf(() => v2.callTool(params));
      expect(first.outcome).toBeInstanceOf(Error);
      expect(second.outcome).toBeInstanceOf(Error);
      return [first.span, second.span];
    } finally {
      await v1.close();
      await v2.close();
    }
  }

  it('the server ended the session (400): an SdkHttpError with the status, a transport error as for 1.x', async () => {
    const [first, second] = await failedCalls(server.url, (sessionId) =>
      fetch(server.url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId } }),
    );
    expect(second.attributes).toEqual({
      ...first.attributes,
      'mcp.session.id': second.attributes['mcp.session.id'],
      'error.type': 'SdkHttpError',
    });
    expect(first.attributes['error.type']).toBe('StreamableHTTPError');
    expect(second.attributes['http.response.status_code']).toBe(400);
    expect(second.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: expect.stringMatching(/^Error POSTing to endpoint: .*No valid session ID provided/),
    });
    for (const span of [first, second]) {
      expect(storedCall(span).outcome).toBe('transport_error');
      expect(classifyToolCall(storedCall(span))).toMatchObject({
        category: 'transient',
        evidence: 'jsonrpc:-32000',
      });
    }
  });

  it('a proxy answers 503: an SdkHttpError with the status, transient by the status as for 1.x', async () => {
    const [first, second] = await failedCalls(proxy.url, () =>
      proxy.failNextPost(503, 'Service Unavailable'),
    );
    expect(second.attributes).toMatchObject({
      'error.type': 'SdkHttpError',
      'http.response.status_code': 503,
    });
    for (const span of [first, second]) {
      expect(storedCall(span).outcome).toBe('transport_error');
      expect(classifyToolCall(storedCall(span))).toMatchObject({
        category: 'transient',
        evidence: 'http:503',
      });
    }
  });

  it('a gateway answers 401 and the client has no auth provider: permission by the status, as for 1.x', async () => {
    const [first, second] = await failedCalls(proxy.url, () => proxy.failNextPost(401, ''));
    expect(second.attributes).toMatchObject({
      'error.type': 'SdkHttpError',
      'http.response.status_code': 401,
    });
    for (const span of [first, second]) {
      expect(storedCall(span).outcome).toBe('transport_error');
      expect(classifyToolCall(storedCall(span))).toMatchObject({
        category: 'permission',
        evidence: 'http:401',
      });
    }
  });
});

describe('trace context', () => {
  it("goes into the v2 client's params._meta, beside the host's own keys, and the host's params are left as they were", async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await seedServer().connect(serverSide);
    const client = instrumentMcpClient(new ClientV2({ name: 'errata-sdk-test', version: '1.0.0' }));
    await client.connect(clientSide as never);
    try {
      const params = { name: 'echo_meta', arguments: {}, _meta: { 'com.example/tenant': 'acme' } };
      const { span, outcome } = await spanOf(() => client.callTool(params));
      expect(params).toEqual({ name: 'echo_meta', arguments: {}, _meta: { 'com.example/tenant': 'acme' } });
      const { traceId, spanId } = span.spanContext();
      expect((outcome as { structuredContent: unknown }).structuredContent).toEqual({
        meta: { 'com.example/tenant': 'acme', traceparent: `00-${traceId}-${spanId}-01` },
      });
      expect(span.attributes).toMatchObject({
        'errata.server.name': 'seed-fixtures',
        'jsonrpc.request.id': expect.stringMatching(/^\d+$/),
        'mcp.protocol.version': expect.any(String),
      });
    } finally {
      await client.close();
    }
  });
});

describe('a v2 client on the 2026-07-28 protocol', () => {
  it('sends a tools/call again when the server refuses its Mcp-Param headers (-32020): still one call, one span', async () => {
    // A server that refuses the first tools/call with HEADER_MISMATCH, as a server whose tool declarations the
    // client's cached list no longer matches does; the client lists the tools again and sends the call again.
    const server = new Server({ name: 'header-checking', version: '2.0.0' }, { capabilities: { tools: {} } });
    const tool = {
      name: 'lookup',
      inputSchema: { type: 'object' as const, properties: { id: { type: 'string' } } },
    };
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [tool] }));
    const sent: unknown[] = [];
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      sent.push(extra.requestId);
      if (sent.length === 1) throw new McpError(-32020, 'Mcp-Param-Id does not match the arguments');
      return { content: [{ type: 'text', text: 'found' }], resultType: 'complete' };
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = instrumentMcpClient(new ClientV2({ name: 'errata-sdk-test', version: '1.0.0' }));
    const discover = { supportedVersions: ['2026-07-28'], capabilities: { tools: {} } };
    await client.connect(clientSide as never, { prior: { kind: 'modern', discover } } as never);
    try {
      expect(client.getProtocolEra()).toBe('modern');
      const { span, outcome } = await spanOf(() =>
        client.callTool({ name: 'lookup', arguments: { id: 'A1' } }),
      );
      expect(outcome).toMatchObject({ content: [{ type: 'text', text: 'found' }] });
      expect(sent).toHaveLength(2);
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
      // The request that was answered: the one sent again.
      expect(span.attributes['jsonrpc.request.id']).toBe(String(sent[1]));
      expect(span.attributes).toMatchObject({
        'errata.result.is_error': false,
        'mcp.protocol.version': '2026-07-28',
      });
    } finally {
      await client.close();
    }
  });
});

describe('a v2 client instrumented after connect', () => {
  it('has the protocol version all the same, from its getNegotiatedProtocolVersion() (a 1.x stdio client has none)', async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await seedServer().connect(serverSide);
    const client = new ClientV2({ name: 'errata-sdk-test', version: '1.0.0' });
    await client.connect(clientSide as never);
    try {
      instrumentMcpClient(client);
      const { span } = await spanOf(() => client.callTool({ name: 'echo_meta', arguments: {} }));
      expect(client.getNegotiatedProtocolVersion()).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(span.attributes['mcp.protocol.version']).toBe(client.getNegotiatedProtocolVersion());
    } finally {
      await client.close();
    }
  });
});

describe('module patching of the v2 client', () => {
  it.each([
    ['required after startErrata', '0'],
    ['already loaded when startErrata runs', '1'],
  ])('CommonJS: startErrata patches @modelcontextprotocol/client %s', async (_when, loadFirst) => {
    const { stdout } = await run(process.execPath, [join(FIXTURES, 'cjs-app.cjs')], {
      env: { ...process.env, EVERYTHING: NPM_SERVER_ENTRIES.everything, LOAD_FIRST: loadFirst },
      timeout: 60_000,
    });
    const spans = JSON.parse(stdout.trim().split('\n').at(-1)!) as { name: string; attributes: object }[];
    expect(spans).toEqual([
      {
        name: 'tools/call echo',
        attributes: expect.objectContaining({
          'jsonrpc.request.id': '1',
          'mcp.protocol.version': '2025-11-25',
          'errata.server.name': 'mcp-servers/everything',
        }),
      },
    ]);
  });

  describe('ESM: node --import @errata/sdk/register', () => {
    let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
    beforeAll(async () => {
      receiver = await startOtlpReceiver();
    });
    afterAll(() => receiver?.close());

    it('patches `import { Client } from "@modelcontextprotocol/client"` and exports its call', async () => {
      await run(process.execPath, ['--import', '@errata/sdk/register', join(FIXTURES, 'esm-app.mjs')], {
        env: { ...process.env, EVERYTHING: NPM_SERVER_ENTRIES.everything, ...receiver.exporterEnv },
        timeout: 60_000,
      });
      const spans = receiver.spans();
      expect(spans.map((span) => span.name)).toEqual(['tools/call echo']);
      expect(spans[0]!.attributes).toMatchObject({
        'jsonrpc.request.id': '1',
        'mcp.protocol.version': '2025-11-25',
        'errata.server.name': 'mcp-servers/everything',
      });
    });
  });
});
