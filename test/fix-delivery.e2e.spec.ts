/**
 * Suggested fixes pushed to MCP server owners and verified from later traffic (DOMAIN.md §7), end to end: real
 * MCP servers (two versions of one server), the Errata SDK, OTLP ingest, the projector, the fix rounds, and a real
 * HTTP receiver that checks every webhook with the `standardwebhooks` package.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { FixEvent } from '@errata/domain';
import { instrumentMcpClient } from '@errata/sdk';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerTestTracing, type TestTracing } from '../libs/sdk/src/tracing.spec-helper';
import { DeliveryRepository } from '../apps/server/src/repositories/delivery.repository';
import { OwnerRepository } from '../apps/server/src/repositories/owner.repository';
import { ProjectRepository } from '../apps/server/src/repositories/project.repository';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { DeliveryService } from '../apps/server/src/services/delivery.service';
import { FixService } from '../apps/server/src/services/fix.service';
import { ProjectorService } from '../apps/server/src/services/projector.service';
import { withLogHorizonHeld } from './support/postgres';
import { importReadmeBlock } from './support/readme-code';
import { until } from './support/until';
import { Receiver } from './support/webhook-receiver';
import {
  connectErrataMcp,
  defaultProjectId,
  sendSpans,
  startTestServer,
  type TestServer,
} from './support/server';

/** Parsed JSON, as loosely typed as JSON.parse returns it. */
type Json = ReturnType<typeof JSON.parse>;

let server: TestServer;
let admin: string;
let tracing: TestTracing;

beforeAll(async () => {
  tracing = registerTestTracing();
  server = await startTestServer('postgres', {
    ERRATA_WEBHOOK_ALLOW_INTERNAL: 'true',
    ERRATA_WEBHOOK_RETRY_BASE_MS: '40',
    ERRATA_WEBHOOK_MAX_ATTEMPTS: '3',
    ERRATA_DELIVERY_POLL_MS: '25',
    ERRATA_FIX_INTERVAL_MS: '3600000', // rounds are run by the tests
    ERRATA_PROJECTION_POLL_MS: '3600000', // and so is projecting (`traffic`), but for ingest's wake-ups
    ERRATA_FIX_MIN_CALLS: '5',
  });
  const project = await server.app.get(ProjectRepository).ensureProject('default');
  admin = (await server.app.get(ApiKeyService).create(project.id, 'admin', 'cli')).key;
}, 60_000);
afterAll(() => server?.close());

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${server.url}/api/v1/${path}`, {
    method,
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}

/**
 * One version of an MCP server whose `search_orders` fails: 1.0.0 with a bare message (an untyped error), 1.1.0
 * with the error envelope Errata suggests; or, `succeeding`, finds an order.
 */
function ordersServer(
  name: string,
  version: string,
  untyped = version === '1.0.0',
  succeeding = false,
): McpServer {
  const server = new McpServer({ name, version });
  server.registerTool('search_orders', { description: 'search orders' }, () =>
    succeeding
      ? { content: [{ type: 'text' as const, text: '{"orders":[{"id":"A-1001","status":"shipped"}]}' }] }
      : untyped
        ? { isError: true, content: [{ type: 'text' as const, text: 'upstream request failed' }] }
        : {
            isError: true,
            content: [
              {
                type: 'text' as const,
                text: '{"errorCategory":"transient","isRetryable":true,"code":"UPSTREAM_UNAVAILABLE","description":"retry later"}',
              },
            ],
            structuredContent: {
              errorCategory: 'transient',
              isRetryable: true,
              code: 'UPSTREAM_UNAVAILABLE',
              description: 'retry later',
            },
          },
  );
  return server;
}

/**
 * `calls` instrumented calls to a real MCP server version (untyped errors: 1.0.0's, unless said; none, `succeeding`),
 * sent to Errata through OTLP and projected (unless said).
 */
async function traffic(
  name: string,
  version: string,
  calls: number,
  {
    untyped,
    succeeding = false,
    project = true,
  }: { untyped?: boolean; succeeding?: boolean; project?: boolean } = {},
): Promise<void> {
  tracing.reset();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const mcp = ordersServer(name, version, untyped, succeeding);
  await mcp.connect(serverSide);
  const client = instrumentMcpClient(new Client({ name: 'fix-test-agent', version: '1.0.0' }));
  await client.connect(clientSide);
  for (let i = 0; i < calls; i++)
    await client.callTool({ name: 'search_orders', arguments: { q: `order ${i}` } });
  await client.close();
  await mcp.close();
  expect(await sendSpans(server.url, server.ingestKey, tracing.spans())).toBe(200);
  if (project) await server.catchUp();
}

/** The delivery of a fix suggested for `serverName`, pending: its receiver answered the first attempt 503, retry in an hour. */
async function parkedSuggestion(serverName: string, receiver: Receiver): Promise<Json> {
  receiver.answers = [503];
  receiver.retryAfter = '3600';
  await registerOwner(serverName, receiver);
  await traffic(serverName, '1.0.0', 3);
  const findingId = suggestionFor(serverName, await server.app.get(FixService).runOnce());
  return until('the first attempt', async () =>
    ((await api('GET', 'deliveries?status=pending')).body as Json[]).find(
      (delivery) => delivery.findingId === findingId && delivery.lastStatus === 503,
    ),
  );
}

async function registerOwner(serverName: string, receiver: Receiver) {
  const url = await receiver.start();
  const registered = await api('POST', 'owners', {
    server: serverName,
    webhookUrl: url,
    contact: 'ops@example.com',
  });
  expect(registered.status).toBe(201);
  expect(registered.body.secret).toMatch(/^whsec_/);
  receiver.secret = registered.body.secret as string;
  return registered.body as { id: string; secret: string };
}

describe('fix rounds during a rebuild', () => {
  it('decide nothing while the read models hold part of the history, then what the whole history says', async () => {
    // Given a fix suggested for 1.0.0, and a 1.1.0 that kept the contract for six calls, then broke it
    const receiver = new Receiver();
    await registerOwner('orders-r', receiver);
    await traffic('orders-r', '1.0.0', 3);
    const fixes = server.app.get(FixService);
    expect((await fixes.runOnce()).map((event) => event.type)).toEqual(['FixSuggested']);
    await traffic('orders-r', '1.1.0', 6);
    // A transaction left open holds projecting back before the relapse (the snapshot horizon), as the later part of
    // a large log stays unprojected for a while during a rebuild
    const projector = server.app.get(ProjectorService);
    await withLogHorizonHeld(server.databaseUrl!, async () => {
      await traffic('orders-r', '1.1.0', 3, { untyped: true, project: false });

      // When a rebuild begins (rules that changed, or `projections rebuild`) and projects what it can
      await projector.beginRebuild();
      await projector.catchUp();
      // Then the round decides nothing from the clean calls alone: the relapse is in the log, not yet projected
      expect(await projector.rebuilding()).toBe(true);
      expect(await fixes.runOnce()).toEqual([]);
    });
    // Once the whole log it began with is projected, the round sees the relapse: 1.1.0 fixed nothing
    await server.catchUp();
    expect(await projector.rebuilding()).toBe(false);
    expect(await fixes.runOnce()).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 300)); // the delivery loop polls every 25 ms
    const sent = receiver.received.map((request) => (JSON.parse(request.body) as { type: string }).type);
    expect(sent).toEqual(['errata.fix.suggested']);
    await receiver.close();
  });
});

describe('owners of version ranges', () => {
  it('refuses a second owner of a range that means the same however it is spelt, and stores ranges canonical', async () => {
    const receiver = new Receiver();
    const webhookUrl = await receiver.start();
    const register = (server: string, versionRange: string) =>
      api('POST', 'owners', { server, versionRange, webhookUrl });

    const first = await register('orders-v', '>=2.0.0 <3');
    expect(first.status).toBe(201);
    expect(first.body.versionRange).toBe('>=2.0.0 <3.0.0');
    for (const spelling of [' >=2.0.0 <3', '>=2.0.0  <3', '>=2.0 <3.0.0', '<3 >=2.0.0']) {
      const again = await register('orders-v', spelling);
      expect(again.status, spelling).toBe(400);
      expect(again.body.message).toBe(
        `server "orders-v" already has an owner (${first.body.id as string}) for version range ">=2.0.0 <3.0.0"`,
      );
    }
    // A range that reads two ways is refused, saying which forms are taken
    const ambiguous = await register('orders-v', '>2');
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.message).toMatch(/^"versionRange" must be comparators such as ">=1\.2\.0 <2"/);
    expect(ambiguous.body.message).toContain('">2" could mean one version or a whole release');

    // An owner registered before ranges were canonicalised, as it was stored then, is compared by meaning too
    const project = await server.app.get(ProjectRepository).ensureProject('default');
    const legacy = await server.app.get(OwnerRepository).create({
      projectId: project.id,
      serverName: 'orders-legacy',
      versionRange: '>=1.0  <2',
      webhookUrl,
      contact: null,
      secret: 'whsec_' + Buffer.from('legacy-secret-legacy-secret-1234').toString('base64'),
    });
    const equivalent = await register('orders-legacy', '>=1.0.0 <2.0.0');
    expect(equivalent.status).toBe(400);
    expect(equivalent.body.message).toContain(`(${legacy.id}) for version range ">=1.0  <2"`);
    await receiver.close();
  });

  it('refuses an empty range, which is not "every version": that is leaving it out', async () => {
    const receiver = new Receiver();
    const webhookUrl = await receiver.start();
    for (const versionRange of ['', '   ']) {
      const refused = await api('POST', 'owners', { server: 'orders-empty', versionRange, webhookUrl });
      expect(refused.status, JSON.stringify(versionRange)).toBe(400);
      expect(refused.body.message).toBe('"versionRange" is empty: leave it out for every version');
    }
    expect((await api('GET', 'owners')).body.some((o: Json) => o.serverName === 'orders-empty')).toBe(false);
    const everyVersion = await api('POST', 'owners', { server: 'orders-empty', webhookUrl });
    expect(everyVersion).toMatchObject({ status: 201, body: { versionRange: null } });
    expect((await api('DELETE', `owners/${everyVersion.body.id as string}`)).status).toBe(204);
    await receiver.close();
  });

  it('given an owner of "2.x", sends it the fixes of 2.1.0 (an x-range once matched no version)', async () => {
    const receiver = new Receiver();
    const registered = await api('POST', 'owners', {
      server: 'orders-x',
      versionRange: '2.x',
      webhookUrl: await receiver.start(),
    });
    expect(registered.status).toBe(201);
    expect(registered.body.versionRange).toBe('>=2.0.0 <3.0.0-0');
    receiver.secret = registered.body.secret as string;
    await traffic('orders-x', '2.1.0', 3, { untyped: true });

    const events = await server.app.get(FixService).runOnce();

    expect(events.filter((event) => event.type === 'FixSuggested')).toHaveLength(1);
    await until('the suggestion to arrive', async () => receiver.received.length >= 1);
    expect(receiver.received[0]!.verified).toBe(true);
    expect(JSON.parse(receiver.received[0]!.body).data.finding.server).toBe('orders-x');
    await receiver.close();
  });
});

describe('the suggested contract', () => {
  it("given metadata only in structuredContent, keeps the tool's own code and wait, read from the log", async () => {
    // Given a tool whose text says nothing and whose structuredContent holds its code and wait (invisible metadata)
    tracing.reset();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const mcp = new McpServer({ name: 'quotes', version: '1.0.0' });
    mcp.registerTool('get_quote', { description: 'a quote' }, () => ({
      isError: true,
      content: [{ type: 'text' as const, text: 'Something went wrong' }],
      structuredContent: {
        errorCategory: 'rate_limited',
        isRetryable: true,
        code: 'QUOTA',
        retryAfterMs: 1000,
      },
    }));
    await mcp.connect(serverSide);
    const client = instrumentMcpClient(new Client({ name: 'fix-test-agent', version: '1.0.0' }));
    await client.connect(clientSide);
    await client.callTool({ name: 'get_quote', arguments: {} });
    await client.close();
    await mcp.close();
    expect(await sendSpans(server.url, server.ingestKey, tracing.spans())).toBe(200);
    await server.catchUp();

    // When its finding is read
    const list = await api('GET', 'findings?server=quotes&tool=get_quote&rule=invisible-metadata');
    expect(list.body.findings).toHaveLength(1);
    const detail = await api('GET', `findings/${list.body.findings[0].id as string}`);

    // Then the suggested result keeps QUOTA and the 1 s wait, which the sample's stored text does not carry
    expect(detail.body.samples[0].text).toBe('Something went wrong');
    expect(detail.body.suggestedContract.result.structuredContent).toMatchObject({
      errorCategory: 'transient',
      isRetryable: true,
      code: 'QUOTA',
      retryAfterMs: 1000,
    });
  });
});

describe('fix delivery', () => {
  it('given a receiver that is down, retries with the same webhook-id until it answers, every attempt signed', async () => {
    const receiver = new Receiver();
    receiver.answers = [503, 503];
    await registerOwner('orders-a', receiver);
    await traffic('orders-a', '1.0.0', 6);
    const events = await server.app.get(FixService).runOnce();
    expect(events.map((e) => e.type)).toEqual(['FixSuggested']);

    await until('three attempts', async () => receiver.received.length >= 3);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    const payload = JSON.parse(receiver.received[2]!.body) as { type: string; data: Json };
    expect(payload.type).toBe('errata.fix.suggested');
    expect(payload.data.suggestedContract).toMatchObject({
      rule: 'untyped-error',
      server: 'orders-a',
      tool: 'search_orders',
      result: { isError: true, structuredContent: { errorCategory: 'transient', isRetryable: true } },
    });
    const findingId = payload.data.fix.findingId as string;
    const fix = await until('the fix to be delivered', async () => {
      const answer = await api('GET', `fixes/${findingId}`);
      return answer.body?.state === 'delivered' && answer.body;
    });
    expect(fix.events.map((e: { type: string }) => e.type)).toEqual(['FixSuggested', 'FixDelivered']);

    // A read key (the dashboard's) sees where the fix stands on the finding itself.
    const finding = await fetch(`${server.url}/api/v1/findings/${findingId}`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(finding.status).toBe(200);
    const detail = (await finding.json()) as Json;
    expect(detail.fix).toMatchObject({ findingId, state: 'delivered', deliveredAt: expect.any(String) });
    expect(detail.deliveries).toMatchObject({
      pending: 0,
      delivered: 1,
      dead: 0,
      disabled: 0,
      latest: { status: 'delivered', attempts: 3, lastStatus: 200 },
    });
    // Who owns the server, where its webhook points and what failed stay behind the admin key.
    expect(Object.keys(detail.deliveries.latest).sort()).toEqual(
      ['attempts', 'createdAt', 'deliveredAt', 'lastStatus', 'nextAttemptAt', 'status'].sort(),
    );
    await receiver.close();
  });

  it('given 410 Gone, disables the endpoint and stops delivering to it', async () => {
    const receiver = new Receiver();
    receiver.answers = [410];
    const owner = await registerOwner('orders-b', receiver);
    await traffic('orders-b', '1.0.0', 3);
    await server.app.get(FixService).runOnce();
    await until('the endpoint to be disabled', async () => {
      const owners = await api('GET', 'owners');
      return (owners.body as { id: string; disabledAt: string | null }[]).find((o) => o.id === owner.id)
        ?.disabledAt;
    });
    const disabled = await api('GET', 'deliveries?status=disabled');
    expect(disabled.body).toHaveLength(1);
    expect(receiver.received).toHaveLength(1);
    await receiver.close();
  });

  it('given a receiver that keeps failing, dead-letters after the last attempt, and redelivers on request', async () => {
    const receiver = new Receiver();
    receiver.answers = [500, 500, 500];
    await registerOwner('orders-c', receiver);
    await traffic('orders-c', '1.0.0', 3);
    await server.app.get(FixService).runOnce();
    const [dead] = await until('a dead letter', async () => {
      const answer = await api('GET', 'deliveries?status=dead');
      return (answer.body as unknown[]).length > 0 && (answer.body as Json[]);
    });
    expect(dead).toMatchObject({ attempts: 3, lastStatus: 500 });
    expect(receiver.received).toHaveLength(3);
    // No attempt follows a dead letter: it shows none due, nor does the finding's latest message (read key)
    expect(dead!.nextAttemptAt).toBeNull();
    const finding = await fetch(`${server.url}/api/v1/findings/${dead!.findingId}`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(((await finding.json()) as Json).deliveries.latest).toMatchObject({
      status: 'dead',
      nextAttemptAt: null,
    });

    expect((await api('POST', `deliveries/${dead!.id}/redeliver`)).status).toBe(201);
    await until('the redelivery', async () => receiver.received.length === 4);
    expect(receiver.received[3]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    expect(receiver.received[3]!.verified).toBe(true);
    await receiver.close();
  });

  it('given a message still pending (its receiver asked for an hour), refuses to redeliver it: 409, its attempts kept', async () => {
    const receiver = new Receiver();
    const pending = await parkedSuggestion('orders-pending', receiver);
    expect(pending).toMatchObject({ lastStatus: 503, nextAttemptAt: expect.any(String) });

    const refused = await api('POST', `deliveries/${pending.id as string}/redeliver`);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toBe(
      `delivery ${pending.id as string} is pending: it goes out on its own (1 attempt so far, the next at ` +
        `${pending.nextAttemptAt as string}); redeliver it once it is dead, disabled or delivered`,
    );
    // Left as it was: the attempt made and the hour its receiver asked for
    const after = ((await api('GET', 'deliveries?status=pending')).body as Json[]).find(
      (d) => d.id === pending.id,
    );
    expect(after).toEqual(pending);
    expect(receiver.received).toHaveLength(1);

    const unknown = await api('POST', `deliveries/00000000-0000-4000-8000-000000000000/redeliver`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe('no delivery 00000000-0000-4000-8000-000000000000 in this project');
    await receiver.close();
  });

  it('given a claim by an instance that died before sending, sends the message once the lease lapses, same webhook-id', async () => {
    const receiver = new Receiver();
    const parked = await parkedSuggestion('orders-lease', receiver);
    // When another instance claims it, due now, as claimDue does (an attempt, a lease), and dies without sending
    const {
      rows: [claim],
    } = await sql<{ leaseUntil: Date }>`
      UPDATE webhook_delivery SET next_attempt_at = now(), attempts = attempts + 1,
             lease_until = now() + interval '1 second'
       WHERE id = ${parked.id as string} RETURNING lease_until AS "leaseUntil"`.execute(server.db);
    // Then no instance sends it while the lease holds, and the next one to look after it lapses does
    const resent = await until('the message sent again', async () => receiver.received[1]);
    expect(resent.at).toBeGreaterThanOrEqual(claim!.leaseUntil.getTime());
    expect(resent.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    expect(resent.verified).toBe(true);
    const delivered = await until('the delivery recorded', async () =>
      ((await api('GET', 'deliveries?status=delivered')).body as Json[]).find((d) => d.id === parked.id),
    );
    // The dead instance's claim counts as an attempt: a claim that crashes its instance every time ends dead-lettered
    expect(delivered).toMatchObject({ attempts: 3, lastStatus: 200 });
    expect(receiver.received).toHaveLength(2);
    await receiver.close();
  });

  it('given a delivered message redelivered that then dies, does not claim it was delivered', async () => {
    const receiver = new Receiver();
    await registerOwner('orders-k', receiver);
    await traffic('orders-k', '1.0.0', 3);
    const findingId = suggestionFor('orders-k', await server.app.get(FixService).runOnce());
    const ofFinding = async (status: string) =>
      ((await api('GET', `deliveries?status=${status}`)).body as Json[]).filter(
        (delivery) => delivery.findingId === findingId,
      );
    const [delivered] = await until('the delivery', async () => {
      const found = await ofFinding('delivered');
      return found.length === 1 && found;
    });
    expect(delivered).toMatchObject({ lastStatus: 200, deliveredAt: expect.any(String) });

    // When it is redelivered, and every attempt of the new cycle fails
    receiver.answers = [500, 500, 500];
    const redelivered = await api('POST', `deliveries/${delivered!.id as string}/redeliver`);
    // Then the redelivery starts afresh, and the dead letter it ends as says nothing of the earlier delivery
    expect(redelivered.body).toMatchObject({
      status: 'pending',
      attempts: 0,
      deliveredAt: null,
      lastStatus: null,
      lastError: null,
    });
    const [dead] = await until('the dead letter', async () => {
      const found = await ofFinding('dead');
      return found.length === 1 && found;
    });
    expect(dead).toMatchObject({ id: delivered!.id, attempts: 3, lastStatus: 500, deliveredAt: null });
    expect(receiver.received).toHaveLength(4);
    await receiver.close();
  });

  it('given 429 with Retry-After, waits at least that long before the next attempt', async () => {
    const receiver = new Receiver();
    receiver.answers = [429];
    receiver.retryAfter = '1';
    await registerOwner('orders-f', receiver);
    await traffic('orders-f', '1.0.0', 3);
    await server.app.get(FixService).runOnce();
    await until('the second attempt', async () => receiver.received.length === 2);
    const [first, second] = receiver.received;
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1_000); // the backoff alone would be ~40 ms
    await receiver.close();
  });

  it('given a rotated secret, signs with both the new and the previous one', async () => {
    const receiver = new Receiver();
    const owner = await registerOwner('orders-d', receiver);
    const previous = receiver.secret;
    const rotated = await api('POST', `owners/${owner.id}/rotate-secret`);
    expect(rotated.body.secret).not.toBe(previous);
    receiver.secret = previous; // a receiver that has not switched yet still verifies
    await traffic('orders-d', '1.0.0', 3);
    await server.app.get(FixService).runOnce();
    await until('the delivery', async () => receiver.received.length === 1);
    expect(receiver.received[0]!.verified).toBe(true);
    expect(
      new Webhook(rotated.body.secret as string).verify(
        receiver.received[0]!.body,
        receiver.received[0]!.headers as Record<string, string>,
      ),
    ).toBeTruthy();
    // And the README's recipe, run as written, takes the message as it arrived, with either secret
    const { verifyErrataWebhook } = await importReadmeBlock<{
      verifyErrataWebhook: (secret: string, headers: Record<string, string>, body: string) => boolean;
    }>('verifyErrataWebhook');
    const { headers, body } = receiver.received[0]!;
    for (const secret of [previous, rotated.body.secret as string])
      expect(verifyErrataWebhook(secret, headers as Record<string, string>, body)).toBe(true);
    expect(verifyErrataWebhook(previous, headers as Record<string, string>, `${body} `)).toBe(false);
    await receiver.close();
  });
});

describe('a stop during a backlog', () => {
  it('given a stop, a fix round decides no finding once stopping has aborted; the next round decides it', async () => {
    const receiver = new Receiver();
    await registerOwner('orders-stop', receiver);
    await traffic('orders-stop', '1.0.0', 6);
    const stopping = new AbortController();
    stopping.abort();
    expect(await server.app.get(FixService).runOnce(stopping.signal)).toEqual([]);
    const events = await server.app.get(FixService).runOnce();
    expect(events.map((e) => e.type)).toEqual(['FixSuggested']);
    await server.app.get(DeliveryService).sendDue();
    await receiver.close();
  });

  it('given due deliveries to a receiver that never answers, a stop finishes the claim in flight and claims no more', async () => {
    // A server of its own: this test stops it.
    const stopped = await startTestServer('postgres', {
      ERRATA_WEBHOOK_ALLOW_INTERNAL: 'true',
      ERRATA_WEBHOOK_TIMEOUT_MS: '1000',
      ERRATA_DELIVERY_POLL_MS: '25',
      ERRATA_FIX_INTERVAL_MS: '3600000',
    });
    let posts = 0;
    const hanging = createServer(() => posts++); // takes each webhook and never answers
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    try {
      const projectId = await defaultProjectId(stopped.db);
      const owner = await stopped.app.get(OwnerRepository).create({
        projectId,
        serverName: 'orders-hanging',
        versionRange: null,
        webhookUrl: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hooks`,
        contact: null,
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      });
      // More than two claims (20 each), due at once: the worker's first claim takes 20.
      await stopped.db.transaction().execute(async (trx) => {
        for (let i = 0; i < 45; i++)
          await stopped.app.get(DeliveryRepository).enqueue(trx, {
            projectId,
            ownerId: owner.id,
            findingId: null,
            msgId: `msg_stop_${i}`,
            dedupeKey: `stop-${i}`,
            eventType: 'errata.fix.suggested',
            payload: '{}',
          });
      });
      await until('the first claim to be posted', async () => posts === 20);
      await stopped.close();
      // The round went on claiming until nothing was due: 45 posts, a receiver's timeout per claim, after SIGTERM.
      expect(posts).toBe(20);
    } finally {
      hanging.closeAllConnections();
      hanging.close();
    }
  });
});

describe('the deliveries list', () => {
  it('pages newest first, deliveries of one instant in one order, so that pages neither overlap nor skip', async () => {
    // A project of its own: the other tests' deliveries change state meanwhile
    const project = await server.app.get(ProjectRepository).ensureProject('paged-deliveries');
    const key = (await server.app.get(ApiKeyService).create(project.id, 'admin', 'cli')).key;
    const list = async (query: string) => {
      const response = await fetch(`${server.url}/api/v1/deliveries${query}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      return { status: response.status, body: (await response.json()) as Json };
    };
    const receiver = new Receiver();
    const owner = await fetch(`${server.url}/api/v1/owners`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ server: 'orders-paged', webhookUrl: await receiver.start() }),
    });
    const ownerId = ((await owner.json()) as { id: string }).id;
    // Given seven dead letters, three of them created in the same instant
    const createdAt = ['05', '04', '03', '03', '03', '02', '01'].map((s) => `2026-01-01T00:00:${s}.000Z`);
    await server.db
      .insertInto('webhook_delivery')
      .values(
        createdAt.map((at, i) => ({
          project_id: project.id,
          owner_id: ownerId,
          finding_id: null,
          msg_id: `msg_paged_${i}`,
          dedupe_key: `paged-${i}`,
          event_type: 'fix.suggested',
          payload: '{}',
          status: 'dead' as const,
          created_at: at,
        })),
      )
      .execute();
    // When they are read three at a time
    const all = await list('');
    const pages = [await list('?limit=3'), await list('?limit=3&offset=3'), await list('?offset=6&limit=3')];
    // Then the pages are the whole list, in its order, newest first
    expect(all.body.map((d: { createdAt: string }) => d.createdAt)).toEqual(createdAt);
    expect(pages.map((page) => page.body.length)).toEqual([3, 3, 1]);
    expect(pages.flatMap((page) => page.body)).toEqual(all.body);
    expect((await list('?offset=7')).body).toEqual([]);
    expect((await list('?status=dead&limit=1')).body).toEqual([all.body[0]]);
    // And a page size it does not take is refused, naming the bounds
    for (const bad of ['?limit=0', '?limit=501', '?limit=2.5', '?offset=-1']) {
      const refused = await list(bad);
      expect(refused.status).toBe(400);
      expect(refused.body.message).toMatch(/must be a whole number from \d+ to \d+/);
    }
    await receiver.close();
  });
});

describe('acknowledge_fix over MCP', () => {
  async function acknowledgeOverMcp(key: string, findingId: string) {
    const client = await connectErrataMcp(server.url, key, 'owner-agent');
    const result = await client.callTool({ name: 'acknowledge_fix', arguments: { findingId } });
    await client.close();
    return result.structuredContent as { ok: boolean; data: Json; error: Json };
  }

  it('refuses a read key with a permission error, and records the acknowledgement for an admin key', async () => {
    const [fix] = (await api('GET', 'fixes')).body as { findingId: string }[];
    expect(await acknowledgeOverMcp(server.readKey, fix!.findingId)).toEqual({
      ok: false,
      data: null,
      error: {
        errorCategory: 'permission',
        isRetryable: false,
        code: 'ADMIN_KEY_REQUIRED',
        description: expect.stringContaining('admin key') as string,
      },
    });
    const acknowledged = await acknowledgeOverMcp(admin, fix!.findingId);
    expect(acknowledged).toMatchObject({ ok: true, data: { state: 'acknowledged', acknowledgedBy: 'mcp' } });
  });
});

/** The finding id of the fix a round suggested for a server. */
function suggestionFor(serverName: string, events: readonly FixEvent[]): string {
  const suggested = events.find((e) => e.type === 'FixSuggested' && e.data.server === serverName);
  expect(suggested, `a suggestion for ${serverName}`).toBeDefined();
  return suggested!.data.findingId;
}

describe('fix lifecycle from traffic', () => {
  it('given a newer version that only ever succeeded, does not verify the fix until one of its failures is typed', async () => {
    const receiver = new Receiver();
    await registerOwner('orders-quiet', receiver);
    await traffic('orders-quiet', '1.0.0', 3);
    const fixes = server.app.get(FixService);
    const findingId = suggestionFor('orders-quiet', await fixes.runOnce());
    // Given 1.1.0 called well over ERRATA_FIX_MIN_CALLS times, never failing: nothing said of how it reports failures
    await traffic('orders-quiet', '1.1.0', 8, { succeeding: true });
    expect((await fixes.runOnce()).filter((e) => e.data.findingId === findingId)).toEqual([]);
    // When it fails once, with the envelope Errata suggested
    await traffic('orders-quiet', '1.1.0', 1);
    // Then verified, by all its calls
    expect((await fixes.runOnce()).filter((e) => e.data.findingId === findingId)).toMatchObject([
      { type: 'FixVerified', data: { version: '1.1.0', calls: 9 } },
    ]);
    await receiver.close();
  });

  it('given a clean newer version called only before the suggestion, verifies the fix only from calls after it', async () => {
    const receiver = new Receiver();
    await traffic('orders-g', '1.1.0', 6); // clean, but before anyone suggested anything
    await traffic('orders-g', '1.0.0', 3);
    await registerOwner('orders-g', receiver);
    const fixes = server.app.get(FixService);
    const findingId = suggestionFor('orders-g', await fixes.runOnce());
    expect((await fixes.runOnce()).filter((e) => e.data.findingId === findingId)).toEqual([]);

    await traffic('orders-g', '1.1.0', 5);
    expect((await fixes.runOnce()).filter((e) => e.data.findingId === findingId)).toEqual([
      {
        type: 'FixVerified',
        data: { findingId, version: '1.1.0', calls: 5, badVersions: [], at: expect.any(String) },
      },
    ]);
    await until('the verification message', async () =>
      receiver.received.some((r) => JSON.parse(r.body).type === 'errata.fix.verified'),
    );
    await receiver.close();
  });

  it('given a version that still violated after the suggestion, the verification names it among the bad versions', async () => {
    const receiver = new Receiver();
    await registerOwner('orders-m', receiver);
    await traffic('orders-m', '1.0.0', 3);
    const fixes = server.app.get(FixService);
    const findingId = suggestionFor('orders-m', await fixes.runOnce());
    // Given 2.0.0, released after the suggestion, violating the rule still, then a clean 3.0.0
    await traffic('orders-m', '2.0.0', 2, { untyped: true });
    expect((await fixes.runOnce()).filter((e) => e.data.findingId === findingId)).toEqual([]);
    await traffic('orders-m', '3.0.0', 5);
    expect((await fixes.runOnce()).filter((e) => e.data.findingId === findingId)).toMatchObject([
      { type: 'FixVerified', data: { version: '3.0.0', badVersions: ['2.0.0'] } },
    ]);
    // Then the owner hears it verified by 3.0.0, with 2.0.0 among the versions that violated the rule
    const verified = await until('the verification message', async () =>
      receiver.received
        .map((r) => JSON.parse(r.body) as { type: string; data: Json })
        .find((body) => body.type === 'errata.fix.verified'),
    );
    expect(verified.data.fix).toMatchObject({ verifiedVersion: '3.0.0', badVersions: ['1.0.0', '2.0.0'] });
    expect((await api('GET', `fixes/${findingId}`)).body.badVersions).toEqual(['1.0.0', '2.0.0']);
    await receiver.close();
  });

  it('given an owner replaced after the suggestion (its deliveries went with it), the new owner receives it', async () => {
    const unreachable = new Receiver();
    unreachable.answers = [500, 500, 500];
    const first = await registerOwner('orders-h', unreachable);
    await traffic('orders-h', '1.0.0', 3);
    const fixes = server.app.get(FixService);
    const findingId = suggestionFor('orders-h', await fixes.runOnce());
    await until('a failed attempt', async () => unreachable.received.length >= 1);
    expect((await api('DELETE', `owners/${first.id}`)).status).toBe(204);
    await unreachable.close();

    const replacement = new Receiver();
    await registerOwner('orders-h', replacement);
    // No news: the suggestion is sent again, to the new owner
    expect((await fixes.runOnce()).filter((e) => e.data.findingId === findingId)).toEqual([]);
    await until('the suggestion at the new owner', async () => replacement.received.length === 1);
    expect(JSON.parse(replacement.received[0]!.body)).toMatchObject({
      type: 'errata.fix.suggested',
      data: { fix: { findingId } },
    });
    await until('the fix to be delivered', async () => {
      return (await api('GET', `fixes/${findingId}`)).body.state === 'delivered';
    });
    await fixes.runOnce();
    await server.app.get(DeliveryService).sendDue();
    expect(replacement.received).toHaveLength(1); // once
    await replacement.close();
  });

  it('given an owner replaced after the suggestion reached the first, sends the new one the fix as the suggestion left it', async () => {
    const first = new Receiver();
    const owner = await registerOwner('orders-l', first);
    await traffic('orders-l', '1.0.0', 3);
    const fixes = server.app.get(FixService);
    const findingId = suggestionFor('orders-l', await fixes.runOnce());
    await until('the suggestion to be recorded as delivered', async () => {
      return (await api('GET', `fixes/${findingId}`)).body.state === 'delivered';
    });
    expect((await api('POST', `findings/${findingId}/acknowledge`)).status).toBe(201);
    const sent = JSON.parse(first.received[0]!.body) as { data: Json };
    expect((await api('DELETE', `owners/${owner.id}`)).status).toBe(204);
    await first.close();

    // When a new owner is registered and the round sends it the suggestion
    const replacement = new Receiver();
    await registerOwner('orders-l', replacement);
    expect((await fixes.runOnce()).filter((e) => e.data.findingId === findingId)).toEqual([]);
    await until('the suggestion at the new owner', async () => replacement.received.length === 1);

    // Then it says what the first said: suggested, not delivered to (nor acknowledged by) an owner since deleted
    const resent = JSON.parse(replacement.received[0]!.body) as { type: string; data: Json };
    expect(resent.type).toBe('errata.fix.suggested');
    expect(resent.data.fix).toEqual(sent.data.fix);
    expect(resent.data.fix).toMatchObject({ state: 'suggested', deliveredAt: null, acknowledgedAt: null });
    expect(resent.data.finding.fix).toEqual(resent.data.fix);
    await replacement.close();
  });

  it('given a regression whose message has not reached the owner, redelivering the older suggestion leaves the fix regressed', async () => {
    const receiver = new Receiver();
    await registerOwner('orders-i', receiver);
    await traffic('orders-i', '1.0.0', 3);
    const fixes = server.app.get(FixService);
    const findingId = suggestionFor('orders-i', await fixes.runOnce());
    await until('the suggestion to be recorded as delivered', async () => {
      return (await api('GET', `fixes/${findingId}`)).body.state === 'delivered';
    });
    await traffic('orders-i', '1.1.0', 5);
    expect((await fixes.runOnce()).filter((e) => e.data.findingId === findingId)).toMatchObject([
      { type: 'FixVerified' },
    ]);
    await until('the verification message', async () => receiver.received.length === 2);
    // Given the verified version violating again while the owner's endpoint fails: the regression is dead-lettered
    receiver.answers = [500, 500, 500];
    await traffic('orders-i', '1.1.0', 1, { untyped: true });
    expect((await fixes.runOnce()).filter((e) => e.data.findingId === findingId)).toMatchObject([
      { type: 'FixRegressed' },
    ]);
    const ofFinding = async (status: string) =>
      (
        (await api('GET', `deliveries?status=${status}`)).body as {
          id: string;
          findingId: string;
          eventType: string;
        }[]
      ).filter((delivery) => delivery.findingId === findingId);
    const [deadRegression] = await until('the regression message to be dead-lettered', async () => {
      const dead = await ofFinding('dead');
      return dead.length === 1 && dead;
    });
    expect(deadRegression).toMatchObject({ eventType: 'errata.fix.regressed' });

    // When an admin redelivers the old suggestion, and the endpoint takes it
    const [suggestion] = (await ofFinding('delivered')).filter((d) => d.eventType === 'errata.fix.suggested');
    expect((await api('POST', `deliveries/${suggestion!.id}/redeliver`)).status).toBe(201);
    await until('the suggestion delivered again', async () => {
      return (await ofFinding('delivered')).some((d) => d.id === suggestion!.id);
    });
    // Then the fix stays regressed: its owner has not heard that it regressed
    const regressed = (await api('GET', `fixes/${findingId}`)).body;
    expect(regressed.state).toBe('regressed');
    expect(regressed.events.map((e: { type: string }) => e.type)).toEqual([
      'FixSuggested',
      'FixDelivered',
      'FixVerified',
      'FixRegressed',
    ]);

    // And once the regression itself is delivered, the fix is delivered again
    expect((await api('POST', `deliveries/${deadRegression!.id}/redeliver`)).status).toBe(201);
    await until('the fix to be delivered again', async () => {
      return (await api('GET', `fixes/${findingId}`)).body.state === 'delivered';
    });
    await receiver.close();
  });

  it('given an endpoint disabled by a 410, still finds the fix regressed; the message waits until it is enabled', async () => {
    const receiver = new Receiver();
    receiver.answers = [200, 410]; // the suggestion is taken, the verification answered 410 Gone
    const owner = await registerOwner('orders-j', receiver);
    await traffic('orders-j', '1.0.0', 3);
    const fixes = server.app.get(FixService);
    const findingId = suggestionFor('orders-j', await fixes.runOnce());
    await until('the suggestion at the owner', async () => receiver.received.length === 1);
    await traffic('orders-j', '1.1.0', 5);
    expect((await fixes.runOnce()).filter((e) => e.data.findingId === findingId)).toMatchObject([
      { type: 'FixVerified' },
    ]);
    await until('the endpoint to be disabled', async () => {
      const owners = (await api('GET', 'owners')).body as { id: string; disabledAt: string | null }[];
      return owners.find((o) => o.id === owner.id)?.disabledAt;
    });

    // When a newer version violates the rule again while the endpoint is disabled
    await traffic('orders-j', '1.2.0', 1, { untyped: true });
    // Then the fix regresses all the same, and its message waits
    expect((await fixes.runOnce()).filter((e) => e.data.findingId === findingId)).toMatchObject([
      { type: 'FixRegressed', data: { version: '1.2.0' } },
    ]);
    expect((await api('GET', `fixes/${findingId}`)).body.state).toBe('regressed');
    await server.app.get(DeliveryService).sendDue();
    expect(receiver.received).toHaveLength(2);
    const pending = ((await api('GET', 'deliveries?status=pending')).body as Json[]).filter(
      (delivery) => delivery.findingId === findingId,
    );
    expect(pending).toMatchObject([{ eventType: 'errata.fix.regressed', attempts: 0 }]);

    // And once the endpoint is enabled, the owner hears of the regression and the fix is delivered again
    expect((await api('POST', `owners/${owner.id}/enable`)).status).toBe(201);
    await until('the fix to be delivered again', async () => {
      return (await api('GET', `fixes/${findingId}`)).body.state === 'delivered';
    });
    expect(JSON.parse(receiver.received[2]!.body)).toMatchObject({
      type: 'errata.fix.regressed',
      data: { fix: { findingId, state: 'regressed' } },
    });
    await receiver.close();
  });

  it('given the old version violating and a new one that does not, acknowledged, then verified; a relapse regresses it', async () => {
    const receiver = new Receiver();
    await registerOwner('orders-e', receiver);
    await traffic('orders-e', '1.0.0', 6);
    const fixes = server.app.get(FixService);
    await fixes.runOnce();
    const findingId = await until('the suggestion', async () => {
      const message = receiver.received[0];
      return message && (JSON.parse(message.body).data.fix.findingId as string);
    });
    await until('the suggestion to be recorded as delivered', async () => {
      return (await api('GET', `fixes/${findingId}`)).body.state === 'delivered';
    });
    const acknowledged = await api('POST', `findings/${findingId}/acknowledge`);
    expect(acknowledged.body).toMatchObject({ state: 'acknowledged', acknowledgedBy: 'api' });
    // Said again (a retried request, a second click): the same fix, the first acknowledgement's time; one event (below)
    const again = await api('POST', `findings/${findingId}/acknowledge`);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(acknowledged.body);

    await traffic('orders-e', '1.1.0', 4); // below ERRATA_FIX_MIN_CALLS: not yet
    expect((await fixes.runOnce()).filter((e) => e.data.findingId === findingId)).toEqual([]);
    await traffic('orders-e', '1.1.0', 2);
    const verified = (await fixes.runOnce()).filter((e) => e.data.findingId === findingId);
    expect(verified).toEqual([
      {
        type: 'FixVerified',
        data: { findingId, version: '1.1.0', calls: 6, badVersions: [], at: expect.any(String) },
      },
    ]);
    await until('the verification message', async () =>
      receiver.received.some((r) => JSON.parse(r.body).type === 'errata.fix.verified'),
    );

    // The verified version violates the rule again.
    const relapse = new McpServer({ name: 'orders-e', version: '1.1.0' });
    relapse.registerTool('search_orders', { description: 'search orders' }, () => ({
      isError: true,
      content: [{ type: 'text' as const, text: 'database exploded' }],
    }));
    tracing.reset();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await relapse.connect(serverSide);
    const client = instrumentMcpClient(new Client({ name: 'fix-test-agent', version: '1.0.0' }));
    await client.connect(clientSide);
    await client.callTool({ name: 'search_orders', arguments: {} });
    await client.close();
    await relapse.close();
    expect(await sendSpans(server.url, server.ingestKey, tracing.spans())).toBe(200);
    await server.catchUp();
    const regressed = (await fixes.runOnce()).filter((e) => e.data.findingId === findingId);
    expect(regressed).toMatchObject([{ type: 'FixRegressed', data: { version: '1.1.0', offences: 1 } }]);
    await until('the regression message', async () =>
      receiver.received.some((r) => JSON.parse(r.body).type === 'errata.fix.regressed'),
    );
    // The worker records the delivery after the receiver answered: wait for it.
    const fix = await until('the fix to be delivered again', async () => {
      const answer = await api('GET', `fixes/${findingId}`);
      return answer.body.state === 'delivered' && answer;
    });
    expect(fix.body.events.map((e: { type: string }) => e.type)).toEqual([
      'FixSuggested',
      'FixDelivered',
      'FixAcknowledged',
      'FixVerified',
      'FixRegressed',
      'FixDelivered',
    ]);
    // Re-opened and delivered again: the fix remembers when it regressed and which versions violated.
    expect(fix.body).toMatchObject({
      state: 'delivered',
      badVersions: ['1.0.0', '1.1.0'],
      verifiedVersion: '1.1.0',
    });
    expect(fix.body.regressedAt).toEqual(expect.any(String));
    // Each message's finding has the fix as its event left it: the body does not contradict itself
    const bodies = receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: Json });
    expect(bodies.map((body) => [body.type, body.data.fix.state])).toEqual([
      ['errata.fix.suggested', 'suggested'],
      ['errata.fix.verified', 'verified'],
      ['errata.fix.regressed', 'regressed'],
    ]);
    for (const body of bodies) {
      expect(body.data.finding.fix).toEqual(body.data.fix);
      expect(body.data.finding).not.toHaveProperty('deliveries');
    }
    await server.app.get(DeliveryService).sendDue();
    await receiver.close();
  });
});
