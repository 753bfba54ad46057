import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentTrace, type ToolCallSpec } from './support/agent-spans';
import { sendSpans, startTestServer, type Store, type TestServer } from './support/server';

const t0 = Date.UTC(2026, 10, 30, 8, 0, 0);

const denied = (startMs: number): ToolCallSpec => ({
  tool: 'read_records',
  server: 'records',
  startMs,
  durationMs: 20,
  isError: true,
  category: 'permission',
  text: 'Access denied to financial records',
});

/**
 * Given: triage-bot retries a permission error four times (four wasted retries, more than a group shows), retries a
 * validation error blindly once and recovers from a transient one; billing-bot, in a trace of its own, retries a
 * business error once.
 */
function agentSpans(): ReadableSpan[] {
  const agentTrace = new AgentTrace();
  agentTrace.run('triage-bot', t0, [
    ...[0, 100, 200, 300, 400].map((ms) => denied(t0 + ms)),
    {
      tool: 'create_ticket',
      server: 'desk',
      startMs: t0 + 500,
      durationMs: 10,
      isError: true,
      category: 'validation',
      text: 'Invalid priority',
    },
    {
      tool: 'create_ticket',
      server: 'desk',
      startMs: t0 + 600,
      durationMs: 15,
      isError: true,
      category: 'validation',
      text: 'Invalid priority',
    },
    {
      tool: 'fetch_order',
      server: 'desk',
      startMs: t0 + 700,
      durationMs: 30,
      isError: true,
      category: 'transient',
      text: 'upstream timed out',
    },
    { tool: 'fetch_order', server: 'desk', startMs: t0 + 800, durationMs: 10 },
  ]);
  agentTrace.run('billing-bot', t0 + 1000, [
    {
      tool: 'refund',
      server: 'desk',
      startMs: t0 + 1000,
      durationMs: 40,
      isError: true,
      category: 'business',
      text: 'Outside the refund window',
    },
    {
      tool: 'refund',
      server: 'desk',
      startMs: t0 + 1100,
      durationMs: 35,
      isError: true,
      category: 'business',
      text: 'Outside the refund window',
    },
  ]);
  return agentTrace.spans();
}

interface Sample {
  traceId: string;
  spanId: string;
  startTime: string;
  reason: string;
  agentName: string | null;
  agentId: string | null;
}
interface Group {
  key: string;
  wastedRetries: number;
  samples: Sample[];
}

describe.each(['postgres', 'pglite'] as Store[])('retry-waste samples on %s', (store) => {
  let server: TestServer;
  const spans = agentSpans();
  /** The span id of the call that started `ms` after t0. */
  const spanAt = (ms: number) =>
    spans.find((span) => span.attributes['jsonrpc.request.id'] === String(t0 + ms))!.spanContext();

  beforeAll(async () => {
    server = await startTestServer(store);
    expect(await sendSpans(server.url, server.ingestKey, spans)).toBe(200);
    await server.catchUp();
  }, 120_000);
  afterAll(() => server?.close());

  const get = async (path: string) => {
    const response = await fetch(`${server.url}/api/v1/${path}`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(response.status, path).toBe(200);
    return response.json();
  };
  const groups = async (query: string): Promise<Record<string, Group>> =>
    Object.fromEntries(
      ((await get(`reports/retry-waste?${query}`)) as { groups: Group[] }).groups.map((g) => [g.key, g]),
    );
  const spanIds = (group: Group | undefined) => group?.samples.map((sample) => sample.spanId);

  it('shows each group its latest wasted retries, newest first, with their reason, agent and trace', async () => {
    const byCategory = await groups('groupBy=category');
    expect(byCategory['permission']?.wastedRetries).toBe(4);
    expect(byCategory['permission']?.samples).toEqual(
      [400, 300, 200].map((ms) => ({
        traceId: spanAt(ms).traceId,
        spanId: spanAt(ms).spanId,
        startTime: new Date(t0 + ms).toISOString(),
        reason: 'non_retryable',
        agentName: 'triage-bot',
        agentId: 'triage-bot-1',
      })),
    );
    expect(byCategory['validation']?.samples).toMatchObject([
      { spanId: spanAt(600).spanId, reason: 'blind_retry' },
    ]);
    expect(byCategory['business']?.samples).toMatchObject([
      { spanId: spanAt(1100).spanId, traceId: spanAt(1100).traceId, agentName: 'billing-bot' },
    ]);
    // A retry that recovered wasted nothing: no sample.
    expect(byCategory['transient']?.samples).toEqual([]);
  });

  it('given groupBy server or tool, then samples are those of the group', async () => {
    const byServer = await groups('groupBy=server');
    expect(spanIds(byServer['records'])).toEqual([400, 300, 200].map((ms) => spanAt(ms).spanId));
    expect(spanIds(byServer['desk'])).toEqual([1100, 600].map((ms) => spanAt(ms).spanId));
    const byTool = await groups('groupBy=tool');
    expect(spanIds(byTool['desk/create_ticket'])).toEqual([spanAt(600).spanId]);
    expect(spanIds(byTool['desk/fetch_order'])).toEqual([]);
  });

  it('applies the report filters to the samples: agent, tool and window', async () => {
    expect(spanIds((await groups('groupBy=server&agent=billing-bot'))['desk'])).toEqual([
      spanAt(1100).spanId,
    ]);
    expect(spanIds((await groups('groupBy=server&tool=create_ticket'))['desk'])).toEqual([
      spanAt(600).spanId,
    ]);
    const window = `from=${new Date(t0 + 50).toISOString()}&to=${new Date(t0 + 250).toISOString()}`;
    expect(spanIds((await groups(`groupBy=category&${window}`))['permission'])).toEqual(
      [200, 100].map((ms) => spanAt(ms).spanId),
    );
  });

  it('opens on the sample in its run timeline, where the call is the same wasted retry', async () => {
    const [sample] = (await groups('groupBy=category'))['permission']!.samples;
    const timeline = (await get(`traces/${sample!.traceId}`)) as {
      items: { kind: string; spanId: string; retry: { label: string; wasted: boolean } | null }[];
    };
    expect(timeline.items.find((item) => item.spanId === sample!.spanId)).toMatchObject({
      kind: 'call',
      retry: { label: sample!.reason, wasted: true },
    });
  });
});
