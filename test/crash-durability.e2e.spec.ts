import { once } from 'node:events';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/postgres';
import { spawnServer } from './support/server-process';

const INGEST_KEY = 'crash-test-ingest-key';
const SPANS_PER_REQUEST = 50;

function request(batch: number): { body: string; spanIds: string[] } {
  const traceId = batch.toString(16).padStart(32, '0').replace(/^0/, 'c');
  const start = BigInt(Date.UTC(2026, 10, 30, 13)) * 1_000_000n + BigInt(batch) * 1_000n;
  const spanIds: string[] = [];
  const spans = [];
  for (let i = 0; i < SPANS_PER_REQUEST; i++) {
    const spanId = (batch * SPANS_PER_REQUEST + i + 1).toString(16).padStart(16, '0');
    spanIds.push(spanId);
    spans.push({
      traceId,
      spanId,
      name: 'tools/call read_file',
      kind: 3,
      startTimeUnixNano: `${start + BigInt(i)}`,
      endTimeUnixNano: `${start + BigInt(i) + 1_000_000n}`,
      attributes: [
        { key: 'mcp.method.name', value: { stringValue: 'tools/call' } },
        { key: 'gen_ai.tool.name', value: { stringValue: 'read_file' } },
        { key: 'errata.server.name', value: { stringValue: 'filesystem' } },
        { key: 'errata.result.is_error', value: { boolValue: i % 5 === 0 } },
      ],
    });
  }
  return { body: JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }), spanIds };
}

/**
 * eventstore.md §6: SIGKILL (not SIGTERM) the server under sustained ingest; after a restart every span whose
 * request got 200 is in the log exactly once. The kill must land mid-ingest (requests fail), or the test
 * proves nothing.
 */
describe('durability across SIGKILL during sustained ingest', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(inject('templateDatabase'));
  });
  afterAll(() => database.drop());

  it('keeps every acknowledged span exactly once', async () => {
    const env = { DATABASE_URL: database.url, ERRATA_INGEST_KEY: INGEST_KEY };
    const first = await spawnServer(env);
    const acked: string[] = [];
    let failedRequests = 0;
    let batch = 0;
    let stop = false;

    const sender = async () => {
      while (!stop) {
        const { body, spanIds } = request(batch++);
        try {
          const response = await fetch(`${first.url}/v1/traces`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${INGEST_KEY}` },
            body,
          });
          await response.arrayBuffer();
          if (response.status === 200) acked.push(...spanIds);
          else failedRequests++;
        } catch {
          failedRequests++;
          if (first.child.exitCode !== null || first.child.signalCode !== null) return;
        }
      }
    };
    const senders = Array.from({ length: 6 }, sender);
    while (acked.length < 20 * SPANS_PER_REQUEST) await new Promise((resolve) => setTimeout(resolve, 20));
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    await new Promise((resolve) => setTimeout(resolve, 200));
    stop = true;
    await Promise.all(senders);

    expect(first.child.signalCode).toBe('SIGKILL');
    expect(failedRequests).toBeGreaterThan(0); // the kill interrupted requests in flight
    expect(acked.length).toBeGreaterThanOrEqual(20 * SPANS_PER_REQUEST);

    const second = await spawnServer(env); // restart: migrations and bootstrap run again on the crashed store
    second.child.kill('SIGTERM');
    await once(second.child, 'exit');

    const client = new Client({ connectionString: database.url });
    await client.connect();
    const { rows } = await client.query<{ span_id: string; copies: number }>(
      `SELECT encode(span_id, 'hex') AS span_id, count(*)::int AS copies FROM event GROUP BY span_id`,
    );
    await client.end();
    const copies = new Map(rows.map((row) => [row.span_id, row.copies]));
    const missing = acked.filter((spanId) => copies.get(spanId) !== 1);
    expect(missing).toEqual([]);
    expect(rows.every((row) => row.copies === 1)).toBe(true);
  }, 90_000);
});
