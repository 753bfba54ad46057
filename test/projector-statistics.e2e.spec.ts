/**
 * The projector keeps the planner's statistics of its tables current as they grow: a table the planner believes
 * empty gets plans that scan a whole project for every batch's traces (BENCHMARKS.md: the catch-up after 100 k
 * events went from 25.7 s to 9.2 s). CI's PostgreSQL runs with autovacuum off, and PGlite has none, so only the
 * projector analyzes here.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatedCorpus } from './support/generated-corpus';
import { until } from './support/until';
import { sendSpans, startTestServer, type Store, type TestServer } from './support/server';

describe.each(['postgres', 'pglite'] as Store[])('projector statistics on %s', (store) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(store);
  });
  afterAll(() => server?.close());

  /** The planner's row estimates; -1 until a table is first analyzed. */
  const estimates = async () => {
    const { rows } = await sql<{ relname: string; estimate: number }>`
      SELECT relname, reltuples::float8 AS estimate FROM pg_class
       WHERE relname IN ('contribution', 'tool_call') AND relkind = 'r'`.execute(server.db);
    return Object.fromEntries(rows.map((row) => [row.relname, Number(row.estimate)]));
  };

  it('analyzes the projection tables once 10,000 events have been projected, not before', async () => {
    const spans = generatedCorpus({ traces: 1_400, seed: 11, startMs: Date.UTC(2026, 10, 29) });
    expect(spans.length).toBeGreaterThan(10_000);
    const [early, rest] = [spans.slice(0, 4_000), spans.slice(4_000)];
    expect(await sendSpans(server.url, server.ingestKey, early)).toBe(200);
    await server.catchUp();
    expect((await estimates())['contribution']).toBe(-1);

    for (let at = 0; at < rest.length; at += 4_000) {
      expect(await sendSpans(server.url, server.ingestKey, rest.slice(at, at + 4_000))).toBe(200);
    }
    await server.catchUp();
    // The background loop may have projected the last batch: its ANALYZE follows that batch's commit, which is
    // all the catch-up waits for.
    const after = await until('the projection tables analyzed', async () => {
      const now = await estimates();
      return now['contribution'] !== -1 && now['tool_call'] !== -1 && now;
    });
    expect(after['contribution']).toBeGreaterThan(1_000); // the planner no longer sees an empty table
    expect(after['tool_call']).toBeGreaterThan(1_000);
  }, 60_000);
});

describe('projector statistics that cannot be refreshed', () => {
  it('are a warning: a catch-up whose ANALYZE is canceled (past ERRATA_PG_QUERY_TIMEOUT_MS) projects everything', async () => {
    // Given an ANALYZE that must wait for another session's lock, past the server's 1 s statement bound
    const server = await startTestServer('postgres', { ERRATA_PG_QUERY_TIMEOUT_MS: '1000' });
    const holder = new pg.Client({ connectionString: server.databaseUrl! });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      // Writes (ROW EXCLUSIVE) go on beside this lock; an ANALYZE (SHARE UPDATE EXCLUSIVE) waits for it.
      await holder.query('LOCK TABLE span_edge IN SHARE UPDATE EXCLUSIVE MODE');
      const spans = generatedCorpus({ traces: 1_400, seed: 12, startMs: Date.UTC(2026, 10, 29) });
      expect(spans.length).toBeGreaterThan(10_000);

      // When more than 10,000 events are projected
      for (let at = 0; at < spans.length; at += 4_000) {
        expect(await sendSpans(server.url, server.ingestKey, spans.slice(at, at + 4_000))).toBe(200);
      }
      await server.catchUp();

      // Then every call is projected, though the statistics were not refreshed
      const { rows } = await sql<{ observed: string; calls: string; analyzed: number }>`
        SELECT (SELECT count(*) FROM event WHERE type = 'ToolCallObserved')::text AS observed,
               (SELECT count(*) FROM tool_call)::text AS calls,
               (SELECT reltuples FROM pg_class WHERE relname = 'span_edge' AND relkind = 'r')::float8 AS analyzed
      `.execute(server.db);
      expect(Number(rows[0]!.observed)).toBeGreaterThan(5_000);
      expect(rows[0]!.calls).toBe(rows[0]!.observed);
      expect(Number(rows[0]!.analyzed)).toBe(-1);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
      await server.close();
    }
  }, 90_000);
});
