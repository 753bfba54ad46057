/**
 * The projector keeps the planner's statistics of its tables current as they grow: a table the planner believes
 * empty gets plans that scan a whole project for every batch's traces (BENCHMARKS.md: the catch-up after 100 k
 * events went from 25.7 s to 8.9 s). CI's PostgreSQL runs with autovacuum off, so only the projector analyzes here.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatedCorpus } from './support/generated-corpus';
import { sendSpans, startTestServer, type TestServer } from './support/server';

describe('projector statistics', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('postgres');
  });
  afterAll(() => server?.close());

  const analyzed = async () => {
    const { rows } = await sql<{ relname: string; analyzed: boolean; estimate: number }>`
      SELECT s.relname, s.last_analyze IS NOT NULL AS analyzed, greatest(c.reltuples, 0)::float8 AS estimate
        FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
       WHERE s.relname IN ('contribution', 'tool_call')`.execute(server.db);
    return Object.fromEntries(rows.map((row) => [row.relname, row]));
  };

  it('analyzes the projection tables once 10,000 events have been projected, not before', async () => {
    const spans = generatedCorpus({ traces: 1_400, seed: 11, startMs: Date.UTC(2026, 10, 29) });
    expect(spans.length).toBeGreaterThan(10_000);
    const [early, rest] = [spans.slice(0, 4_000), spans.slice(4_000)];
    expect(await sendSpans(server.url, server.ingestKey, early)).toBe(200);
    await server.catchUp();
    expect((await analyzed())['contribution']?.analyzed).toBe(false);

    for (let at = 0; at < rest.length; at += 4_000) {
      expect(await sendSpans(server.url, server.ingestKey, rest.slice(at, at + 4_000))).toBe(200);
    }
    await server.catchUp();
    const after = await analyzed();
    expect(after['contribution']?.analyzed).toBe(true);
    expect(after['tool_call']?.analyzed).toBe(true);
    expect(after['tool_call']?.estimate).toBeGreaterThan(1_000); // the planner no longer sees an empty table
  }, 60_000);
});
