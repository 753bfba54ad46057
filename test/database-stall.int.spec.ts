/**
 * The network path to PostgreSQL can stall without closing: a partition, a failover, a firewall dropping packets.
 * No error comes, so without a bound a request on a pooled connection waits for ever, and so does the projector.
 * Here a real TCP proxy between Errata and the real PostgreSQL stops forwarding, keeping every socket open; the
 * connections it held are lost for good, as across a failover (only connections opened after it heals forward).
 * Errata, with a short ERRATA_PG_QUERY_TIMEOUT_MS, must answer 503 + Retry-After over REST and ERRATA_UNAVAILABLE over
 * MCP meanwhile, then drop the dead connections and serve and project again once the path is back.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inject } from 'vitest';
import { loadConfig } from '../apps/server/src/config/app-config';
import { startServer } from '../apps/server/src/start-server';
import { AgentTrace } from './support/agent-spans';
import { createTestDatabase, type TestDatabase } from './support/postgres';
import { connectErrataMcp, sendSpans } from './support/server';
import { until } from './support/until';

/**
 * A TCP proxy to PostgreSQL that can stall: then it forwards nothing, closes nothing, and holds every new connection
 * open and silent. What it held when stalled stays silent after `heal()`, as connections whose state a failover or
 * a firewall lost; connections opened after it forward again.
 */
class StallingProxy {
  private readonly server: Server;
  private stalled = false;
  private readonly forwarding = new Set<{ client: Socket; upstream: Socket }>();
  private readonly sockets = new Set<Socket>();

  constructor(private readonly target: { host: string; port: number }) {
    this.server = createServer((client) => this.accept(client));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as { port: number }).port;
  }

  stall(): void {
    this.stalled = true;
    for (const { client, upstream } of this.forwarding) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
    this.forwarding.clear();
  }

  heal(): void {
    this.stalled = false;
  }

  /** Connections open through the proxy (silent ones included). */
  get open(): number {
    return [...this.sockets].filter((socket) => !socket.destroyed).length;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: Socket): void {
    this.track(client);
    if (this.stalled) return; // accepted, never answered
    const upstream = connect(this.target.port, this.target.host);
    this.track(upstream);
    const pair = { client, upstream };
    this.forwarding.add(pair);
    const end = () => {
      this.forwarding.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) socket.on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.sockets.delete(socket));
  }
}

const QUERY_TIMEOUT_MS = 1_500;
let database: TestDatabase;
let proxy: StallingProxy;
let app: NestExpressApplication;
let url: string;
let mcp: McpClient;
const ingestKey = 'test-ingest-stall-0123456789';
const readKey = 'test-read-stall-0123456789';

beforeAll(async () => {
  database = await createTestDatabase(inject('templateDatabase'));
  const target = new URL(database.url);
  proxy = new StallingProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const viaProxy = new URL(database.url);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(await proxy.listen());
  app = await startServer(
    loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: viaProxy.toString(),
      ERRATA_INGEST_KEY: ingestKey,
      ERRATA_READ_KEY: readKey,
      ERRATA_PG_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
      ERRATA_PROJECTION_POLL_MS: '100',
    }),
    ['error'], // the stall's warnings and the projector's retries are expected here
  );
  url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  mcp = await connectErrataMcp(url, readKey);
});

afterAll(async () => {
  await mcp?.close();
  // First, so that a statement still waiting on a silent connection (without a bound) fails and shutdown goes on.
  await proxy?.close();
  await app?.close();
  await database?.drop();
});

const report = (path: string) =>
  fetch(`${url}/api/v1/reports/${path}`, {
    headers: { authorization: `Bearer ${readKey}` },
    // Far past the bound: without one the answer never comes, and the test says so rather than hanging.
    signal: AbortSignal.timeout(60_000),
  });

async function toolCalls(): Promise<number> {
  const answer = await report('retry-waste');
  if (answer.status !== 200) return -1;
  return ((await answer.json()) as { totals: { calls: number } }).totals.calls;
}

async function ingestOneCall(agent: string): Promise<void> {
  const trace = new AgentTrace();
  const t0 = Date.now() - 10_000;
  const spans = trace.run(agent, t0, [{ tool: 'lookup', startMs: t0, durationMs: 2 }]);
  await trace.shutdown();
  expect(await sendSpans(url, ingestKey, spans)).toBe(200);
}

const escalationRates = () =>
  mcp.callTool({ name: 'get_escalation_rates', arguments: {} }, undefined, { timeout: 60_000 });

it('answers 503 / ERRATA_UNAVAILABLE while the path to PostgreSQL stalls, then serves and projects again once it is back', async () => {
  // Given a server that ingests, projects and answers through the proxy
  await ingestOneCall('before');
  await until('the first call projected', async () => (await toolCalls()) === 1, 30_000);
  // (the MCP tool answers, and the pool holds idle connections, all through the proxy)
  expect((await escalationRates()).isError).toBeFalsy();
  expect((await report('escalations')).status).toBe(200);

  // When the path stalls: every pooled connection silent, new ones never answered
  proxy.stall();

  // Then an MCP tool call (its key checked moments ago) gets the envelope that says to retry
  const duringStall = await escalationRates();
  expect(duringStall.isError).toBe(true);
  expect(duringStall.structuredContent).toMatchObject({
    ok: false,
    error: { code: 'ERRATA_UNAVAILABLE', isRetryable: true },
  });
  // and a REST report is answered 503 + Retry-After: 5
  const rest = await report('escalations');
  expect(rest.status).toBe(503);
  expect(rest.headers.get('retry-after')).toBe('5');
  // and readiness says the database cannot be reached
  const readiness = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(60_000) });
  expect(readiness.status).toBe(503);

  // When the path is back (the connections it held stay dead: only new ones work)
  proxy.heal();

  // Then requests succeed again: the connections that timed out were closed, not handed out again
  await until('a report answered 200', async () => (await report('escalations')).status === 200, 60_000);
  for (let i = 0; i < 3; i++) {
    expect((await escalationRates()).isError).toBeFalsy();
    expect((await report('escalations')).status).toBe(200);
  }
  // and the projector, whose statements met the stall too, projects what is ingested now
  await ingestOneCall('after');
  await until('the call ingested after the stall projected', async () => (await toolCalls()) === 2, 90_000);
}, 240_000);
