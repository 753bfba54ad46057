/**
 * A hinted retry (`errata.retry.of`) that names a call of another trace: a chat runtime that makes every user turn
 * a trace retries, in turn two, a call that failed in turn one. The hint always wins (DOMAIN.md §2), whichever
 * batches the projector reads the two traces in, and whatever later touches only one of them.
 */
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectorService } from '../apps/server/src/services/projector.service';
import { AgentTrace } from './support/agent-spans';
import { startTestServer, type Store, type TestServer } from './support/server';

const t0 = Date.UTC(2026, 10, 30, 9, 0, 0);
const DENIED = {
  tool: 'refund',
  durationMs: 40,
  isError: true,
  category: 'business',
  text: 'Refund exceeds the 30 day window',
} as const;

/** Turn one: the refund fails. Turn two, a minute later and in a trace of its own: the runtime retries it. */
function turns() {
  const first = new AgentTrace().run('chat', t0, [{ ...DENIED, startMs: t0 }]);
  const failed = first.find((span) => span.name === 'tools/call refund')!;
  const failedId = failed.spanContext().spanId;
  const second = new AgentTrace().run('chat', t0 + 60_000, [
    { ...DENIED, startMs: t0 + 60_000, extra: { 'errata.retry.of': failedId } },
    { tool: 'lookup_order', startMs: t0 + 60_100, durationMs: 10 },
  ]);
  const retry = second.find((span) => span.name === 'tools/call refund')!;
  return { first, second, failedId, retryId: retry.spanContext().spanId };
}

/** One OTLP request with these spans, then the projector until it has caught up: a batch of their own. */
async function sendAndProject(server: TestServer, spans: ReadableSpan[]) {
  const response = await fetch(`${server.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf', authorization: `Bearer ${server.ingestKey}` },
    body: ProtobufTraceSerializer.serializeRequest(spans),
  });
  expect(response.status).toBe(200);
  await server.catchUp();
}

describe.each(['postgres', 'pglite'] as Store[])('hinted retries across traces on %s', (store) => {
  let server: TestServer;
  const { first, second, failedId, retryId } = turns();
  const traceOf = (spans: ReadableSpan[]) => spans[0]!.spanContext().traceId;

  const send = (spans: ReadableSpan[]) => sendAndProject(server, spans);

  async function get(path: string) {
    const response = await fetch(`${server.url}/api/v1/${path}`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(response.status).toBe(200);
    return response.json();
  }

  const totals = async () => (await get('reports/retry-waste')).totals;
  const EXPECTED = { calls: 3, retries: 1, wastedRetries: 1, wastedMs: 40, unrecoveredChains: 1 };

  beforeAll(async () => {
    server = await startTestServer(store);
    // Each turn in a request and a projector batch of its own.
    await send(first);
    await send(second);
  }, 120_000);
  afterAll(() => server?.close());

  it('counts the retry although its trace was projected after, and apart from, the call it retries', async () => {
    expect(await totals()).toMatchObject(EXPECTED);
    const groups = (await get('reports/retry-waste')).groups;
    expect(groups).toEqual([expect.objectContaining({ key: 'business', retries: 1, wastedRetries: 1 })]);
  });

  it("shows the retry in its trace's timeline, and the failed call's chain as unrecovered in the other", async () => {
    const secondTimeline = await get(`traces/${traceOf(second)}`);
    const retry = secondTimeline.items.find((item: { spanId: string }) => item.spanId === retryId);
    const firstRun = (await get(`traces/${traceOf(first)}`)).runs[0].runId;
    expect(retry.retry).toEqual({
      of: failedId,
      at: { traceId: traceOf(first), runId: firstRun }, // in the other trace
      label: 'non_retryable',
      wasted: true,
    });
    // Only the trace asked for: the linked trace's items and runs stay out of it.
    expect(secondTimeline.items).toHaveLength(2);
    expect(secondTimeline.runs).toHaveLength(1);
    const firstTimeline = await get(`traces/${traceOf(first)}`);
    expect(firstTimeline.items).toEqual([
      expect.objectContaining({ spanId: failedId, retry: null, chainRecovered: false }),
    ]);
  });

  it('keeps the figures when the first trace alone is sent again (an exporter retrying its request)', async () => {
    await send(first);
    expect(await totals()).toMatchObject(EXPECTED);
  });

  it('keeps the figures when the second trace alone is sent again', async () => {
    await send(second);
    expect(await totals()).toMatchObject(EXPECTED);
  });

  it('a rebuild from the log gives the same figures', async () => {
    await server.app.get(ProjectorService).rebuild();
    expect(await totals()).toMatchObject(EXPECTED);
  });
});

/**
 * A job that retries a failing call once per run, each run a trace of its own hinting the attempt before: a chain
 * across eight traces, projected one trace per batch, with ERRATA_MAX_LINKED_TRACES at 3. Each batch derives the
 * new trace with the three before it, and reads the fourth for the hint it names.
 */
describe('a chain of hinted retries longer than ERRATA_MAX_LINKED_TRACES', () => {
  let server: TestServer;
  const ATTEMPTS = 8;

  beforeAll(async () => {
    server = await startTestServer('postgres', { ERRATA_MAX_LINKED_TRACES: '3' });
    let previous: string | undefined;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const startMs = t0 + attempt * 60_000;
      const spans = new AgentTrace().run('nightly-refunds', startMs, [
        { ...DENIED, startMs, extra: previous === undefined ? {} : { 'errata.retry.of': previous } },
      ]);
      previous = spans.find((span) => span.name === 'tools/call refund')!.spanContext().spanId;
      await sendAndProject(server, spans);
    }
  }, 120_000);
  afterAll(() => server?.close());

  const totals = async () => {
    const response = await fetch(`${server.url}/api/v1/reports/retry-waste`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    return (await response.json()).totals;
  };
  const EXPECTED = {
    calls: ATTEMPTS,
    retries: ATTEMPTS - 1,
    wastedRetries: ATTEMPTS - 1,
    unrecoveredChains: 1,
  };

  it('counts every retry of the chain, also those whose hinted call is beyond the cap', async () => {
    expect(await totals()).toMatchObject(EXPECTED);
  });

  it('a rebuild from the log gives the same figures', async () => {
    await server.app.get(ProjectorService).rebuild();
    expect(await totals()).toMatchObject(EXPECTED);
  });
});

/**
 * DOMAIN.md §7 `retryable-mismatch` on evidence: a stock check its server declared not retryable that came back ok
 * when the agent retried it with the same arguments, once in the same trace (inferred) and once in the next turn's
 * trace (hinted). A retry with other arguments proves nothing. Through OTLP, the read models and the rollups.
 */
describe.each(['postgres', 'pglite'] as Store[])(
  'a failure declared not retryable that a retry recovered, on %s',
  (store) => {
    let server: TestServer;
    const STOCK = { tool: 'check_stock', server: 'inventory', durationMs: 30 } as const;
    const DOWN = {
      ...STOCK,
      isError: true,
      text: JSON.stringify({ errorCategory: 'transient', isRetryable: false, code: 'WAREHOUSE_DOWN' }),
    } as const;
    const first = new AgentTrace().run('stock', t0, [
      { ...DOWN, startMs: t0, argsHash: 'sku-1' },
      { ...STOCK, startMs: t0 + 200, argsHash: 'sku-1' }, // the same call again: ok
      { ...DOWN, startMs: t0 + 400, argsHash: 'sku-2' },
      { ...STOCK, startMs: t0 + 600, argsHash: 'sku-2-corrected' }, // other arguments: no evidence
      { ...DOWN, startMs: t0 + 800, argsHash: 'sku-3' },
    ]);
    /** The span id of the failure with these arguments. */
    const failureOf = (argsHash: string) =>
      first
        .find((span) => span.attributes['errata.args.hash'] === argsHash && span.attributes['error.type'])!
        .spanContext().spanId;
    const lastFailure = failureOf('sku-3');
    const second = new AgentTrace().run('stock', t0 + 60_000, [
      { ...STOCK, startMs: t0 + 60_000, argsHash: 'sku-3', extra: { 'errata.retry.of': lastFailure } },
    ]);

    async function get(path: string) {
      const response = await fetch(`${server.url}/api/v1/${path}`, {
        headers: { authorization: `Bearer ${server.readKey}` },
      });
      expect(response.status).toBe(200);
      return response.json();
    }

    beforeAll(async () => {
      server = await startTestServer(store);
      await sendAndProject(server, first);
      await sendAndProject(server, second);
    }, 120_000);
    afterAll(() => server?.close());

    async function expectFinding() {
      const { findings } = await get('findings');
      expect(findings).toEqual([
        expect.objectContaining({
          server: 'inventory',
          tool: 'check_stock',
          rule: 'retryable-mismatch',
          count: 2,
          rate: 2 / 6,
          evidence: { 'declared_not_retryable:retry_succeeded': 2 },
          serverVersions: ['1.0.0'],
          retriesCaused: 2,
        }),
      ]);
      return findings[0].id as string;
    }

    it('lists the finding with its evidence, and samples the two failures the same call recovered', async () => {
      const id = await expectFinding();
      const detail = await get(`findings/${id}`);
      expect(detail.samples.map((sample: { spanId: string }) => sample.spanId)).toEqual([
        failureOf('sku-1'),
        lastFailure,
      ]);
      expect(detail.suggestedContract.result.structuredContent).toMatchObject({
        errorCategory: 'transient',
        isRetryable: true,
        code: 'WAREHOUSE_DOWN',
      });
      expect(detail.suggestedContract.summary).toBe(
        'inventory/check_stock declares a failure not retryable that succeeded when retried with the same ' +
          'arguments: set isRetryable true.',
      );
    });

    it("grades the server on it: the offending calls are the tool's own", async () => {
      const { servers } = await get('servers');
      expect(servers).toEqual([
        expect.objectContaining({
          server: 'inventory',
          tools: [
            expect.objectContaining({
              tool: 'check_stock',
              calls: 6,
              violatingCalls: 2,
              rules: { 'retryable-mismatch': 2 },
            }),
          ],
        }),
      ]);
    });

    it('a rebuild from the log gives the same finding', async () => {
      await server.app.get(ProjectorService).rebuild();
      await expectFinding();
    });
  },
);
