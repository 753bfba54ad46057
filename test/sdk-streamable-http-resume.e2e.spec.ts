/**
 * @errata/sdk on a Streamable HTTP server that keeps an event store, so that a call whose stream broke can be
 * resumed (`resumptionToken`): the resumed request sends no tools/call (the transport replays the first one's
 * response), so it is no call of its own and no retry. A real MCP server over HTTP on localhost.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { instrumentMcpClient } from '@errata/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  StreamableHTTPServerTransport,
  type EventStore,
} from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolResultSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { z } from 'zod';
import { registerTestTracing, toEvents, type TestTracing } from '../libs/sdk/src/tracing.spec-helper';

/** Every event of every stream, in order: what the server replays after a Last-Event-ID. */
class MemoryEventStore implements EventStore {
  private readonly events: { id: string; streamId: string; message: JSONRPCMessage }[] = [];

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}_${randomUUID()}`;
    this.events.push({ id, streamId, message });
    if ('result' in message || 'error' in message) answered();
    return id;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.events.find((event) => event.id === eventId)?.streamId;
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const at = this.events.findIndex((event) => event.id === lastEventId);
    if (at === -1) return '';
    const { streamId } = this.events[at]!;
    for (const event of this.events.slice(at + 1)) {
      if (event.streamId === streamId) await send(event.id, event.message);
    }
    return streamId;
  }
}

/** The tools/call requests the server ran, with the `_meta` each came with. */
const executed: unknown[] = [];

/** `build_report` answers once this is resolved: a test breaks the call's stream while it waits. */
let reportsHeld: Promise<void> = Promise.resolve();

function reportsServer(): McpServer {
  const server = new McpServer({ name: 'reports', version: '3.1.0' });
  server.registerTool('build_report', { inputSchema: { pages: z.number() } }, async (args, extra) => {
    executed.push(extra._meta);
    await reportsHeld;
    return { content: [{ type: 'text', text: `report of ${args.pages} pages` }] };
  });
  return server;
}

/** Resolves when the server has stored a tools/call's response for replay. */
let answered: () => void = () => undefined;
let tracing: TestTracing;
let http: HttpServer;
let url: URL;

beforeAll(async () => {
  tracing = registerTestTracing();
  const transports = new Map<string, StreamableHTTPServerTransport>();
  http = createServer((req, res) => {
    const sessionId = req.headers['mcp-session-id'];
    const known = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (known !== undefined) return void known.handleRequest(req, res);
    const server = reportsServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new MemoryEventStore(),
      onsessioninitialized: (id) => void transports.set(id, transport),
    });
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
});
afterAll(async () => {
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
});
beforeEach(() => {
  tracing.reset();
  executed.length = 0;
});

it('a call resumed with its resumption token is not recorded again: the server ran it once', async () => {
  const client = instrumentMcpClient(new Client({ name: 'resume-test', version: '1.0.0' }));
  const first = new StreamableHTTPClientTransport(url);
  await client.connect(first);
  const params = { name: 'build_report', arguments: { pages: 12 } };
  let token: string | undefined;
  const stored = new Promise<void>((resolve) => (answered = resolve));
  let release: () => void = () => undefined;
  reportsHeld = new Promise<void>((resolve) => (release = resolve));
  const interrupted = client
    .callTool(params, undefined, { onresumptiontoken: (received) => (token = received) })
    .catch((error: unknown) => error);
  while (token === undefined) await sleep(10);
  const sessionId = first.sessionId;
  await first.close();
  expect(String(await interrupted)).toMatch(/Connection closed/);
  release();

  // Once the server has the response (the broken stream is then let go): a resume before would conflict with it.
  await stored;
  await client.connect(new StreamableHTTPClientTransport(url, { sessionId }));
  const resumed = await client.request({ method: 'tools/call', params }, CallToolResultSchema, {
    resumptionToken: token,
  });
  expect(resumed.content).toEqual([{ type: 'text', text: 'report of 12 pages' }]);

  expect(executed).toHaveLength(1);
  const spans = tracing.spans();
  expect(spans.map((span) => span.name)).toEqual(['tools/call build_report']);
  expect(toEvents(spans)).toMatchObject([
    { type: 'ToolCallObserved', data: { tool: 'build_report', outcome: 'transport_error' } },
  ]);
  await client.close();
});

it('a resumption token on a transport that cannot resume (in memory) is a call sent, and recorded', async () => {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await reportsServer().connect(serverSide);
  const client = instrumentMcpClient(new Client({ name: 'resume-test', version: '1.0.0' }));
  await client.connect(clientSide);
  const result = await client.request(
    { method: 'tools/call', params: { name: 'build_report', arguments: { pages: 1 } } },
    CallToolResultSchema,
    { resumptionToken: 'ignored-by-this-transport' },
  );
  expect(result.content).toEqual([{ type: 'text', text: 'report of 1 pages' }]);
  expect(executed).toHaveLength(1);
  expect(tracing.spans().map((span) => span.name)).toEqual(['tools/call build_report']);
  await client.close();
});
