/**
 * @errata/sdk on the MCP SDK's other ways to a tools/call: `client.request()` directly, a host subclass whose
 * `callTool` calls `super.callTool` on a patched class, errors the client SDK raises itself (a result that breaks
 * the tool's output schema, a task-required tool called with `callTool`), and the experimental tasks API. Real
 * MCP servers: the SDK's own `Server` in process, and server-everything over stdio.
 */
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { classifyToolCall } from '@errata/domain';
import { instrumentMcpClient, toolCallSpanId, withAgentRun } from '@errata/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateMessageResultSchema,
  ErrorCode,
  type CallToolResult,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ToolCallTracer } from '../libs/sdk/src/tool-call-tracer';
import { registerTestTracing, toEvents, type TestTracing } from '../libs/sdk/src/tracing.spec-helper';
import { connectStdio, type StdioServer } from './support/npm-mcp-servers';

let tracing: TestTracing;
beforeAll(() => {
  tracing = registerTestTracing();
});
beforeEach(() => tracing.reset());

function onlySpan(): ReadableSpan {
  const spans = tracing.spans();
  expect(spans.map((span) => span.name)).toHaveLength(1);
  return spans[0]!;
}

/**
 * A weather server whose `forecast` tool declares `{ temp: number }` as its output and answers with a string
 * temperature when asked for `city: "Atlantis"`, and with a JSON-RPC error for an empty city; it keeps the
 * `_meta` of every tools/call it gets.
 */
async function weatherServer(instrument = true): Promise<{ client: Client; metas: unknown[] }> {
  const server = new Server({ name: 'weather', version: '2.0.0' }, { capabilities: { tools: {} } });
  const metas: unknown[] = [];
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: 'forecast',
        inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
        outputSchema: { type: 'object', properties: { temp: { type: 'number' } }, required: ['temp'] },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    metas.push(request.params._meta);
    if (request.params.arguments?.['city'] === '')
      throw new McpError(ErrorCode.InvalidParams, 'city is required');
    const temp = request.params.arguments?.['city'] === 'Atlantis' ? 'warm' : 21;
    return { content: [{ type: 'text', text: JSON.stringify({ temp }) }], structuredContent: { temp } };
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const plain = new Client({ name: 'paths-test', version: '1.0.0' });
  const client = instrument ? instrumentMcpClient(plain) : plain;
  await client.connect(clientSide);
  await client.listTools();
  return { client, metas };
}

describe('client.request() with method tools/call', () => {
  it('gets the span callTool would get, and the trace context in _meta', async () => {
    const { client, metas } = await weatherServer();
    const params = { name: 'forecast', arguments: { city: 'Oslo' }, _meta: { progressToken: 7 } };
    const result = await client.request({ method: 'tools/call', params }, CallToolResultSchema);
    expect(result.structuredContent).toEqual({ temp: 21 });
    expect(params).toEqual({ name: 'forecast', arguments: { city: 'Oslo' }, _meta: { progressToken: 7 } });

    const span = onlySpan();
    expect(span.name).toBe('tools/call forecast');
    expect(span.attributes).toMatchObject({
      'gen_ai.tool.name': 'forecast',
      'errata.server.name': 'weather',
      'errata.result.is_error': false,
      'jsonrpc.request.id': expect.any(String),
    });
    const { traceId, spanId } = span.spanContext();
    expect(metas).toEqual([{ progressToken: 7, traceparent: `00-${traceId}-${spanId}-01` }]);
    await client.close();
  });

  it('is recorded once when callTool sends it', async () => {
    const { client } = await weatherServer();
    await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' } });
    expect(onlySpan().name).toBe('tools/call forecast');
    await client.close();
  });
});

type Override =
  | 'passes the call on'
  | 'awaits before passing it on'
  | 'passes changed params on'
  | 'calls another tool first';

/**
 * A host subclass of a patched Client (what module patching does to Client.prototype, on a class of this test's
 * own) whose callTool does what `override` says before `super.callTool`, instrumented once more with
 * instrumentMcpClient; connected to a server that answers every tool. Returns the client and the tools the server
 * was called with.
 */
async function hostSubclassClient(override: Override): Promise<{ client: Client; called: string[] }> {
  class PatchedClient extends Client {}
  const patcher = new ToolCallTracer(
    () => tracing.provider.getTracer('patch'),
    () => ({}),
  );
  PatchedClient.prototype.callTool = patcher.wrapCallTool(Client.prototype.callTool as never) as never;
  PatchedClient.prototype.request = patcher.wrapRequest(Client.prototype.request as never) as never;
  class HostClient extends PatchedClient {
    override async callTool(...args: Parameters<Client['callTool']>) {
      if (override === 'awaits before passing it on') await new Promise((resolve) => setTimeout(resolve, 5));
      if (override === 'calls another tool first' && args[0].name !== 'login') {
        await this.callTool({ name: 'login', arguments: {} });
      }
      if (override === 'passes changed params on') {
        const [params, ...rest] = args;
        return super.callTool({ ...params, arguments: { ...params.arguments, locale: 'en' } }, ...rest);
      }
      return super.callTool(...args);
    }
  }
  const called: string[] = [];
  const server = new Server({ name: 'echo', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    called.push(request.params.name);
    return { content: [{ type: 'text', text: 'done' }] };
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = instrumentMcpClient(new HostClient({ name: 'paths-test', version: '1.0.0' }));
  await client.connect(clientSide);
  return { client, called };
}

describe.each([
  ['with a context manager', true],
  ['without a context manager (a host that registered only a provider)', false],
])('a host subclass of a patched Client that overrides callTool, %s', (_with, contextManager) => {
  beforeAll(() => {
    if (!contextManager) context.disable();
    return () => {
      if (!contextManager) context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    };
  });

  it.each<Override>(['passes the call on', 'awaits before passing it on', 'passes changed params on'])(
    'gets one span per call when the instance is instrumented too, when its override %s',
    async (override) => {
      const { client, called } = await hostSubclassClient(override);
      await client.callTool({ name: 'say', arguments: {} });
      expect(called).toEqual(['say']);
      expect(onlySpan().name).toBe('tools/call say');
      await client.close();
    },
  );

  it('records a call its override makes first as a call of its own', async () => {
    const { client, called } = await hostSubclassClient('calls another tool first');
    await client.callTool({ name: 'say', arguments: {} });
    expect(called).toEqual(['login', 'say']);
    expect(tracing.spans().map((span) => span.name)).toEqual(['tools/call login', 'tools/call say']);
    await client.close();
  });
});

describe('a result larger than the text limit', () => {
  it('that says it failed beside megabytes of rows is still a hidden failure for Errata: its JSON (structured or text) is sent shrunk', async () => {
    const server = new Server({ name: 'exports', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        { name: 'export_rows', inputSchema: { type: 'object' } },
        { name: 'export_text', inputSchema: { type: 'object' } },
      ],
    }));
    const payload = {
      ok: false,
      error: { code: 'EXPORT_DENIED', message: 'Permission denied for table invoices' },
      rows: Array.from({ length: 2000 }, (_, i) => ({ id: i, memo: 'm'.repeat(200) })),
    };
    // export_rows answers with structuredContent and its mirror; export_text with the JSON text alone.
    server.setRequestHandler(CallToolRequestSchema, async (request) => ({
      content: [{ type: 'text', text: JSON.stringify(payload) }],
      ...(request.params.name === 'export_rows' ? { structuredContent: payload } : {}),
    }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = instrumentMcpClient(new Client({ name: 'big-results-test', version: '1.0.0' }));
    await client.connect(clientSide);
    for (const [tool, attribute] of [
      ['export_rows', 'errata.result.structured'],
      ['export_text', 'errata.result.text'],
    ] as const) {
      tracing.reset();
      await client.callTool({ name: tool, arguments: {} });
      const span = onlySpan();
      const sent = JSON.parse(String(span.attributes[attribute])) as typeof payload;
      expect(sent).toMatchObject({ ok: false, error: payload.error });
      const [event] = toEvents([span]);
      if (event?.type !== 'ToolCallObserved') throw new Error('not a tool call');
      expect(event.data.outcome).toBe('ok');
      expect(classifyToolCall(event.data)).toMatchObject({ failureAsEmpty: true });
    }
    await client.close();
  });
});

describe('errors the client SDK raises itself', () => {
  let everything: StdioServer;
  beforeAll(async () => {
    everything = await connectStdio(
      'everything',
      ['stdio'],
      {},
      (client) => void instrumentMcpClient(client),
    );
    await everything.client.listTools();
  });
  afterAll(() => everything?.close());

  it('a result that breaks the output schema: McpError, no JSON-RPC code; Errata sees no wrong channel', async () => {
    const { client } = await weatherServer();
    await expect(client.callTool({ name: 'forecast', arguments: { city: 'Atlantis' } })).rejects.toThrow(
      /MCP error -32602: Structured content does not match the tool's output schema/,
    );
    const span = onlySpan();
    expect(span.attributes['error.type']).toBe('McpError');
    expect(span.attributes['rpc.response.status_code']).toBeUndefined();
    expect(span.attributes['jsonrpc.request.id']).toEqual(expect.any(String));
    expect(span.status.message).toMatch(/^Structured content does not match the tool's output schema/);
    const [event] = toEvents([span]);
    expect(event).toMatchObject({
      type: 'ToolCallObserved',
      data: { outcome: 'protocol_error', rpcStatusCode: null, errorType: 'McpError' },
    });
    await client.close();
  });

  it("a task-required tool called with callTool: nothing is sent, and it is not the server's error", async () => {
    await expect(
      everything.client.callTool({ name: 'simulate-research-query', arguments: { topic: 'otel' } }),
    ).rejects.toThrow(/requires task-based execution/);
    const span = onlySpan();
    expect(span.attributes['error.type']).toBe('McpError');
    expect(span.attributes['rpc.response.status_code']).toBeUndefined();
    expect(span.attributes['jsonrpc.request.id']).toBeUndefined();
  });

  it('a JSON-RPC error the server sends keeps its code', async () => {
    const { client } = await weatherServer();
    let spanIdSeenByHost: string | undefined;
    const error: unknown = await client
      .callTool({ name: 'forecast', arguments: { city: '' } })
      .catch((thrown: object) => {
        // Recorded (the span ended, the error remembered) before the host's handler runs: a retry can name it.
        spanIdSeenByHost = toolCallSpanId(thrown);
        return thrown;
      });
    expect(String(error)).toMatch(/MCP error -32602: city is required/);
    expect(spanIdSeenByHost).toBe(onlySpan().spanContext().spanId);
    expect(onlySpan().attributes).toMatchObject({
      'error.type': '-32602',
      'rpc.response.status_code': '-32602',
    });
    await client.close();
  });

  it('a call on a closed client: nothing was sent, a transport error', async () => {
    const { client } = await weatherServer();
    await client.close();
    await expect(client.callTool({ name: 'forecast', arguments: { city: 'Oslo' } })).rejects.toThrow(
      /^Not connected$/,
    );
    expect(toEvents([onlySpan()])).toMatchObject([
      { type: 'ToolCallObserved', data: { outcome: 'transport_error', statusMessage: 'Not connected' } },
    ]);
  });

  it('a _meta that is not an object is sent as the host gave it: the host gets what the server makes of it', async () => {
    // This server drops the request it cannot parse: both calls time out.
    const call = { name: 'forecast', arguments: { city: 'Oslo' }, _meta: ['not', 'an', 'object'] };
    const send = (client: Client) =>
      client.callTool(call as never, undefined, { timeout: 300 }).catch((error: unknown) => error);
    const plain = await weatherServer(false);
    const instrumented = await weatherServer();
    const [uninstrumentedOutcome, instrumentedOutcome] = await Promise.all([
      send(plain.client),
      send(instrumented.client),
    ]);
    expect(uninstrumentedOutcome).toBeInstanceOf(McpError);
    expect(String(instrumentedOutcome)).toBe(String(uninstrumentedOutcome));
    expect([plain.metas, instrumented.metas]).toEqual([[], []]);
    await Promise.all([plain.client.close(), instrumented.client.close()]);
  });

  it('the experimental tasks API is not recorded: its tools/call only creates the task', async () => {
    const messages: string[] = [];
    const stream = everything.client.experimental.tasks.callToolStream(
      { name: 'simulate-research-query', arguments: { topic: 'otel' } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    );
    for await (const message of stream) messages.push(message.type);
    expect(messages[0]).toBe('taskCreated');
    expect(messages.at(-1)).toBe('result');
    expect(tracing.spans().filter((span) => span.name.startsWith('tools/call'))).toEqual([]);
  });

  it('nor is a task-augmented callTool (options.task or params.task): the host gets the created task, not a result', async () => {
    const taskStore = new InMemoryTaskStore();
    const server = new McpServer(
      { name: 'tasks', version: '1.0.0' },
      { capabilities: { tasks: { requests: { tools: { call: {} } } } }, taskStore },
    );
    server.experimental.tasks.registerToolTask(
      'report',
      { inputSchema: {}, execution: { taskSupport: 'optional' } },
      {
        async createTask(_args, { taskStore: store, taskRequestedTtl }) {
          const task = await store.createTask({ ttl: taskRequestedTtl, pollInterval: 20 });
          await store.storeTaskResult(task.taskId, 'completed', {
            content: [{ type: 'text', text: 'done' }],
          });
          return { task };
        },
        getTask: (_args, { taskId, taskStore: store }) => store.getTask(taskId),
        getTaskResult: (_args, { taskId, taskStore: store }) =>
          store.getTaskResult(taskId) as Promise<CallToolResult>,
      },
    );
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = instrumentMcpClient(new Client({ name: 'tasks-test', version: '1.0.0' }));
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    await client.listTools();

    const created = [
      await client.callTool({ name: 'report', arguments: {} }, undefined, { task: { ttl: 60_000 } }),
      await client.callTool({ name: 'report', arguments: {}, task: { ttl: 60_000 } }),
    ];
    expect(created.map((result) => [result['content'], typeof result['task']])).toEqual([
      [[], 'object'],
      [[], 'object'],
    ]);
    expect(tracing.spans()).toEqual([]);
    // The same tool called without a task is an ordinary call, recorded.
    await client.callTool({ name: 'report', arguments: {} });
    expect(tracing.spans().map((span) => span.name)).toEqual(['tools/call report']);
    await client.close();
  });
});

/**
 * A server whose `ask` tool asks the client for a sample in the middle of the call, with a `_meta.traceparent` that
 * `traceparentOf` makes from the call's own; `slow` waits, so that two calls are in flight; `inner` answers.
 */
async function samplingServer(
  traceparentOf: (received: string) => string,
  { contextLost = false }: { contextLost?: boolean } = {},
) {
  const server = new McpServer({ name: 'asks-back', version: '1.0.0' });
  let releaseSlow!: () => void;
  const slowHeld = new Promise<void>((resolve) => (releaseSlow = resolve));
  server.registerTool('slow', { inputSchema: {} }, async () => {
    await slowHeld;
    return { content: [{ type: 'text', text: 'slow done' }] };
  });
  server.registerTool('inner', { inputSchema: {} }, async () => ({
    content: [{ type: 'text', text: 'inner' }],
  }));
  server.registerTool('ask', { inputSchema: {} }, async (_args, extra) => {
    const received = String(extra._meta?.['traceparent'] ?? '');
    await extra.sendRequest(
      {
        method: 'sampling/createMessage',
        params: { messages: [], maxTokens: 10, _meta: { traceparent: traceparentOf(received) } },
      },
      CreateMessageResultSchema,
    );
    releaseSlow();
    return { content: [{ type: 'text', text: 'asked' }] };
  });
  const client = instrumentMcpClient(
    new Client({ name: 'paths-test', version: '1.0.0' }, { capabilities: { sampling: {} } }),
  );
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    await client.callTool({ name: 'inner', arguments: {} });
    return { model: 'm', role: 'assistant', content: { type: 'text', text: 'sampled' } };
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  if (contextLost) {
    // As over stdio, where the server's messages reach the client in the context connect() ran in.
    const deliver = clientSide.onmessage!;
    clientSide.onmessage = (message, extra) =>
      context.with(ROOT_CONTEXT, () => deliver.call(clientSide, message, extra));
  }
  return client;
}

describe('a request the server sends in the middle of one of several calls in flight', () => {
  const play = async (traceparentOf: (received: string) => string) => {
    const client = await samplingServer(traceparentOf);
    await withAgentRun({ name: 'parallel' }, () =>
      Promise.all([
        client.callTool({ name: 'slow', arguments: {} }),
        client.callTool({ name: 'ask', arguments: {} }),
      ]),
    );
    await client.close();
    const named = (name: string) => tracing.spans().find((span) => span.name === name)!;
    return { parentOfInner: named('tools/call inner').parentSpanContext?.spanId, named };
  };

  it('is handled in the call its traceparent names, not in the older call of the same trace', async () => {
    const { parentOfInner, named } = await play((received) => received);
    expect(parentOfInner).toBe(named('tools/call ask').spanContext().spanId);
  });

  it("is handled in the run of the calls of its trace when it names another span (the server's own)", async () => {
    const { parentOfInner, named } = await play((received) =>
      received.replace(/-[0-9a-f]{16}-/, '-00f067aa0ba902b7-'),
    );
    expect(parentOfInner).toBe(named('invoke_agent parallel').spanContext().spanId);
  });
});

describe('a request the server sends in the middle of the only call in flight', () => {
  it('is handled in that call, once the calls before it on the connection have ended', async () => {
    // No traceparent to go by: only the calls in flight tell, and the ended ones must have left them.
    const client = await samplingServer(() => '', { contextLost: true });
    await client.callTool({ name: 'inner', arguments: {} });
    await client.callTool({ name: 'ask', arguments: {} });
    await client.close();
    const calls = tracing.spans().filter((span) => span.name === 'tools/call inner');
    const ask = tracing.spans().find((span) => span.name === 'tools/call ask')!;
    expect(calls.map((span) => span.parentSpanContext?.spanId)).toEqual([
      undefined,
      ask.spanContext().spanId,
    ]);
  });
});

describe('a client handed out behind a Proxy (as LangChain MultiServerMCPClient hands out its clients)', () => {
  // Connected as itself, called through the Proxy: the handshake sees the client, the calls the Proxy (the server's
  // requests over stdio: sdk-mcp-servers.e2e).
  const behindProxy = <T extends object>(client: T): T =>
    new Proxy(client, { get: (target, key) => target[key as keyof T] });

  it('records the protocol version the handshake negotiated', async () => {
    const { client } = await weatherServer();
    await behindProxy(client).callTool({ name: 'forecast', arguments: { city: 'Oslo' } });
    await client.close();
    expect(onlySpan().attributes['mcp.protocol.version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});
