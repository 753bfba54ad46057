import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  timestampFromMicros,
  timestampFromUnixNano,
  unixMicros,
} from '../apps/server/src/database/timestamps';
import { startTestServer, type Store, type TestServer } from './support/server';

const SAMPLES = [
  1n,
  1_764_460_800_123_456_789n, // 2025-11-30T00:00:00.123456789Z
  1_796_000_000_999_999_999n,
  4_102_444_799_999_999_000n, // 2099-12-31T23:59:59.999999Z
];

/** The key of an event and of its read-model rows is the span's start in microseconds: both sides must agree. */
describe.each(['postgres', 'pglite'] as Store[])('span times on %s', (store) => {
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
});
