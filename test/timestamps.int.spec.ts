import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  timestampFromMicros,
  timestampFromUnixNano,
  unixMicros,
} from '../apps/server/src/database/timestamps';
import { AgentTrace } from './support/agent-spans';
import { sendSpans, startTestServer, type Store, type TestServer } from './support/server';

const SAMPLES = [
  1n,
  1_764_460_800_123_456_789n, // 2025-11-30T00:00:00.123456789Z
  1_796_000_000_999_999_999n,
  4_102_444_799_999_999_000n, // 2099-12-31T23:59:59.999999Z
];

/**
 * The key of an event and of its read-model rows is the span's start in microseconds: both sides must agree. A report
 * window's bounds go to the database as `Date`s, which each driver writes its own way: both must name the instant.
 */
describe.each(['postgres', 'pglite'] as Store[])('times on %s', (store) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(store);
  }, 120_000);
  afterAll(() => server?.close());

  it('turns nanoseconds into the same microsecond in SQL as in JavaScript, truncating', async () => {
    for (const nanos of SAMPLES) {
      const { rows } = await sql<{ at: string }>`
        SELECT to_char(${timestampFromMicros(sql`${unixMicros(nanos)}::bigint`)} AT TIME ZONE 'UTC',
                       'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at`.execute(server.db);
      expect(rows[0]!.at).toBe(timestampFromUnixNano(nanos));
    }
  });

  it('reads a Date parameter of any year a report window reaches as that instant, 1 BC and 10000 included', async () => {
    for (const iso of [
      '0000-02-29T00:00:00.000Z', // Date's year 0: 1 BC
      '0001-01-01T00:00:00.000Z',
      '2026-11-30T12:34:56.789Z',
      '+010000-01-01T00:00:00.000Z',
    ]) {
      const { rows } = await sql<{ ms: string }>`
        SELECT (extract(epoch FROM ${new Date(iso)}::timestamptz) * 1000)::bigint::text AS ms`.execute(
        server.db,
      );
      expect(rows[0]!.ms, iso).toBe(String(Date.parse(iso)));
    }
  });

  it('answers a report whose window reaches 10000 where its edges widen to whole hours, or starts in 1 BC', async () => {
    for (const window of [
      'to=9999-12-31T23:59:59.999Z',
      'from=9999-12-31T23:30:00Z',
      'from=0000-02-29T00:30:00Z&to=2026-12-01',
    ]) {
      const response = await fetch(`${server.url}/api/v1/reports/escalations?${window}`, {
        headers: { authorization: `Bearer ${server.readKey}` },
      });
      expect(response.status, window).toBe(200);
    }
  });
});

/**
 * A DBA may give Errata's database a DateStyle and a TimeZone of their own (ALTER DATABASE … SET): no answer may
 * change. pg reads times only in the ISO DateStyle; under 'SQL, DMY' the series' bucket starts read as no instant.
 */
describe('a PostgreSQL database with its own DateStyle and TimeZone', () => {
  let server: TestServer;
  const HOUR = Date.UTC(2026, 10, 30, 11);
  beforeAll(async () => {
    server = await startTestServer('postgres', {}, { DateStyle: 'SQL, DMY', TimeZone: 'Pacific/Auckland' });
    const calls = [HOUR - 600_000, HOUR + 600_000, HOUR + 2_400_000].map((startMs) => ({
      tool: 'search',
      startMs,
      durationMs: 5,
    }));
    expect(
      await sendSpans(server.url, server.ingestKey, new AgentTrace().run('agent', HOUR - 700_000, calls)),
    ).toBe(200);
    await server.catchUp();
  }, 120_000);
  afterAll(() => server?.close());

  it('cuts the time series at the same UTC hours, whole and clipped', async () => {
    for (const [window, calls] of [
      ['from=2026-11-30T10:00:00Z&to=2026-11-30T12:00:00Z', [1, 2]],
      ['from=2026-11-30T10:30:00Z&to=2026-11-30T11:45:00Z', [1, 2]],
    ] as const) {
      const response = await fetch(`${server.url}/api/v1/reports/timeseries?${window}&step=hour`, {
        headers: { authorization: `Bearer ${server.readKey}` },
      });
      const series = (await response.json()) as { points: { calls: number }[] };
      expect(
        series.points.map((point) => point.calls),
        window,
      ).toEqual(calls);
    }
  });
});
