/**
 * A report window is [from, to) on each record's start time, to the nanosecond the span gave, whatever rollup
 * buckets the window's edges cut. Calls that start exactly on an hour or a day, a nanosecond before, or some hundreds
 * of nanoseconds after (PostgreSQL keeps microseconds) are counted from the span times sent, independently of the
 * server, and every report, the time series and the MCP tool must agree for windows that end or start on them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectErrataMcp, startTestServer, type Store, type TestServer } from './support/server';

const MS = 1_000_000n;
const HOUR = 3_600_000n * MS;
const ON_HOUR = BigInt(Date.UTC(2026, 10, 28, 12)) * MS;
const ON_DAY = BigInt(Date.UTC(2026, 10, 29)) * MS;
/** Where each run's first call starts: a failure, retried blindly (same arguments) 10 ms after it ended. */
const STARTS = [ON_HOUR, ON_HOUR - 1n, ON_HOUR + 999n, ON_DAY, ON_DAY - 1n, ON_DAY + HOUR - 1_500n];
const RETRY_AFTER = 10n * MS;
const DURATION = 7n * MS;

const attribute = (key: string, value: string | boolean) => ({
  key,
  value: typeof value === 'string' ? { stringValue: value } : { boolValue: value },
});

/** One trace: an agent run with a validation failure and its blind retry, as OTLP/JSON. */
function run(index: number, start: bigint) {
  const traceId = (index + 1).toString(16).padStart(32, '0');
  const agentSpanId = `a${index.toString(16).padStart(15, '0')}`;
  const call = (n: number, at: bigint) => ({
    traceId,
    spanId: `c${n}${index.toString(16).padStart(14, '0')}`,
    parentSpanId: agentSpanId,
    name: 'tools/call search',
    kind: 3,
    startTimeUnixNano: String(at),
    endTimeUnixNano: String(at + DURATION),
    status: { code: 2 },
    attributes: [
      attribute('mcp.method.name', 'tools/call'),
      attribute('gen_ai.tool.name', 'search'),
      attribute('errata.server.name', 'edge-server'),
      attribute('errata.args.hash', 'a1b2c3d4e5f60718293a4b5c6d7e8f90'),
      attribute('errata.result.is_error', true),
      attribute('errata.result.text', 'Wrong ID format'),
      attribute('errata.error.category', 'validation'),
    ],
  });
  return [
    {
      traceId,
      spanId: agentSpanId,
      name: 'invoke_agent edge-agent',
      kind: 1,
      startTimeUnixNano: String(start - MS),
      endTimeUnixNano: String(start + DURATION + RETRY_AFTER + DURATION + MS),
      attributes: [
        attribute('gen_ai.operation.name', 'invoke_agent'),
        attribute('gen_ai.agent.name', 'edge-agent'),
      ],
    },
    call(0, start),
    call(1, start + DURATION + RETRY_AFTER),
  ];
}

/** The windows: ending on, starting on, and straddling each edge, by a millisecond up to a day. */
const WINDOWS = [ON_HOUR, ON_DAY, ON_DAY + HOUR].flatMap((edge) =>
  [1n, 17n * 60_000n, 3_600_000n, 86_400_000n].flatMap((length) => [
    [edge - length * MS, edge],
    [edge, edge + length * MS],
    [edge - length * MS, edge + MS],
  ]),
);

/** The figures of [from, to) counted from the spans sent: each first call heads a chain, each second is its retry. */
function expected(from: bigint, to: bigint) {
  const within = (at: bigint) => at >= from && at < to;
  const heads = STARTS.filter(within).length;
  const retries = STARTS.filter((start) => within(start + DURATION + RETRY_AFTER)).length;
  return {
    calls: heads + retries,
    retries,
    wastedRetries: retries,
    wastedMs: retries * Number(DURATION / MS),
    unrecoveredChains: heads,
  };
}

const iso = (ns: bigint) => new Date(Number(ns / MS)).toISOString();

describe.each(['postgres', 'pglite'] as Store[])('report windows on %s', (store) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(store);
    const response = await fetch(`${server.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.ingestKey}` },
      body: JSON.stringify({
        resourceSpans: [{ scopeSpans: [{ spans: STARTS.flatMap((start, index) => run(index, start)) }] }],
      }),
    });
    expect(await response.json()).toEqual({});
    await server.catchUp();
  }, 120_000);
  afterAll(() => server?.close());

  const api = async (path: string) => {
    const response = await fetch(`${server.url}/api/v1/${path}`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(response.status, path).toBe(200);
    return response.json();
  };

  it('counts a record in the window its start lies in, on every edge, in every report and the series', async () => {
    for (const [from, to] of WINDOWS) {
      const window = `from=${iso(from!)}&to=${iso(to!)}`;
      const want = expected(from!, to!);
      const { totals } = await api(`reports/retry-waste?${window}`);
      expect({ ...totals, wastedTokens: undefined }, window).toEqual({ ...want, wastedTokens: undefined });
      expect((await api(`reports/escalations?${window}`)).totals.failures, window).toBe(want.calls);
      expect((await api(`reports/misclassified-results?${window}`)).totals.calls, window).toBe(want.calls);
      const { servers } = await api(`servers?${window}`);
      expect(
        servers.map((server: { calls: number }) => server.calls),
        window,
      ).toEqual(want.calls === 0 ? [] : [want.calls]);
      const { points } = await api(`reports/timeseries?${window}&step=hour`);
      for (const point of points) {
        const bucket = expected(BigInt(Date.parse(point.from)) * MS, BigInt(Date.parse(point.to)) * MS);
        expect({ calls: point.calls, retries: point.retries }, `${window} ${point.from}`).toEqual({
          calls: bucket.calls,
          retries: bucket.retries,
        });
      }
    }
  });

  it('answers the same windows over MCP', async () => {
    const mcp = await connectErrataMcp(server.url, server.readKey);
    try {
      for (const [from, to] of WINDOWS) {
        const result = await mcp.callTool({
          name: 'get_retry_waste',
          arguments: { from: iso(from!), to: iso(to!) },
        });
        const { totals } = (result.structuredContent as { data: { totals: Record<string, number> } }).data;
        expect(totals.calls, `${iso(from!)}–${iso(to!)}`).toBe(expected(from!, to!).calls);
      }
    } finally {
      await mcp.close();
    }
  });
});
