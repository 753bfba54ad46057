/**
 * The fix lifecycle on embedded PGlite, the default store: one connection, so a fix round that held a transaction
 * while it read on another connection waited for ever, and every request with it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FixEvent } from '@errata/domain';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ProjectRepository } from '../apps/server/src/repositories/project.repository';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { DeliveryService } from '../apps/server/src/services/delivery.service';
import { FixService } from '../apps/server/src/services/fix.service';
import { AgentTrace } from './support/agent-spans';
import { sendSpans, startTestServer, type TestServer } from './support/server';

let server: TestServer;
let receiver: Server;
const received: { type: string }[] = [];
let hooks: string;

beforeAll(async () => {
  server = await startTestServer('pglite', {
    ERRATA_WEBHOOK_ALLOW_INTERNAL: 'true', // the receiver below listens on loopback
    ERRATA_FIX_INTERVAL_MS: '3600000', // rounds are run by the test
    ERRATA_DELIVERY_POLL_MS: '3600000', // and deliveries too
    ERRATA_FIX_MIN_CALLS: '3',
  });
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string });
      response.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hooks = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
}, 120_000);
afterAll(async () => {
  await new Promise((resolve) => receiver?.close(resolve));
  await server?.close();
});

/** `count` calls of search_orders on one version of server orders-p, sent through OTLP and projected. */
async function traffic(version: string, count: number, at: number): Promise<void> {
  // 1.0.0 fails with a bare message (an untyped error); the fixed version with the envelope Errata suggests
  const fixed = version !== '1.0.0';
  const calls = Array.from({ length: count }, (_, i) => ({
    tool: 'search_orders',
    server: 'orders-p',
    startMs: at + i * 10,
    durationMs: 5,
    isError: true,
    text: fixed
      ? '{"errorCategory":"transient","isRetryable":true,"description":"retry later"}'
      : 'upstream request failed',
    extra: { 'errata.server.version': version },
  }));
  expect(await sendSpans(server.url, server.ingestKey, new AgentTrace().run('agent', at, calls))).toBe(200);
  await server.catchUp();
}

const of = (events: readonly FixEvent[]) => events.map((event) => event.type);

it('suggests, delivers, waits and verifies a fix, round after round, without hanging', async () => {
  const project = await server.app.get(ProjectRepository).ensureProject('default');
  const admin = (await server.app.get(ApiKeyService).create(project.id, 'admin', 'cli')).key;
  const registered = await fetch(`${server.url}/api/v1/owners`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ server: 'orders-p', webhookUrl: hooks }),
  });
  expect(registered.status).toBe(201);
  const fixes = server.app.get(FixService);
  const deliveries = server.app.get(DeliveryService);

  await traffic('1.0.0', 3, Date.now() - 60_000);
  expect(of(await fixes.runOnce())).toEqual(['FixSuggested']);
  await deliveries.sendDue();
  // A round over an existing fix reads its traffic and its owners' deliveries
  expect(of(await fixes.runOnce())).toEqual([]);
  await traffic('1.1.0', 3, Date.now());
  expect(of(await fixes.runOnce())).toEqual(['FixVerified']);
  await deliveries.sendDue();
  expect(received.map((message) => message.type)).toEqual(['errata.fix.suggested', 'errata.fix.verified']);
});
