import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectorService } from '../apps/server/src/services/projector.service';
import { AgentTrace } from './support/agent-spans';
import { startTestServer, type Store, type TestServer } from './support/server';

const t0 = Date.UTC(2026, 10, 30, 8, 0, 0);

/** A run with one retry of each common kind, as an instrumented agent would send it. */
function agentSpans() {
  const agentTrace = new AgentTrace();
  agentTrace.run('support-bot', t0, [
    // business failure retried with the same arguments: wasted non_retryable
    {
      tool: 'refund',
      startMs: t0,
      durationMs: 40,
      isError: true,
      category: 'business',
      text: 'Refund exceeds the 30 day window',
    },
    {
      tool: 'refund',
      startMs: t0 + 100,
      durationMs: 35,
      isError: true,
      category: 'business',
      text: 'Refund exceeds the 30 day window',
    },
    // transient failure retried: useful recovery
    {
      tool: 'fetch_order',
      startMs: t0 + 200,
      durationMs: 1000,
      isError: true,
      category: 'transient',
      text: 'upstream timed out',
    },
    { tool: 'fetch_order', startMs: t0 + 1300, durationMs: 20 },
    // a call that is not a retry
    { tool: 'search_tickets', startMs: t0 + 1400, durationMs: 10 },
  ]);
  return agentTrace.spans();
}

describe.each(['postgres', 'pglite'] as Store[])('GET /api/v1/reports/retry-waste on %s', (store) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(store);
    const response = await fetch(`${server.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', authorization: `Bearer ${server.ingestKey}` },
      body: ProtobufTraceSerializer.serializeRequest(agentSpans()),
    });
    expect(response.status).toBe(200);
    await server.catchUp();
  }, 120_000);
  afterAll(() => server?.close());

  const report = async (query = '') => {
    const response = await fetch(`${server.url}/api/v1/reports/retry-waste${query}`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    return { status: response.status, text: await response.text() };
  };

  it('counts every call and groups retries by the category of the call they retried', async () => {
    const { status, text } = await report();
    expect(status).toBe(200);
    const body = JSON.parse(text);
    expect(body.totals).toMatchObject({
      calls: 5,
      retries: 2,
      wastedRetries: 1,
      wastedMs: 35,
      unrecoveredChains: 1,
    });
    const groups = Object.fromEntries(body.groups.map((group: { key: string }) => [group.key, group]));
    expect(groups.business).toMatchObject({
      retries: 1,
      wastedRetries: 1,
      wastedMs: 35,
      reasons: { non_retryable: 1 },
    });
    expect(groups.transient).toMatchObject({
      retries: 1,
      wastedRetries: 0,
      wastedMs: 0,
      reasons: { recovery: 1 },
    });
  });

  it('filters by server, tool, time and agent, and rejects bad parameters with 400', async () => {
    expect(JSON.parse((await report('?tool=refund')).text).totals.calls).toBe(2);
    expect(JSON.parse((await report('?server=nope')).text).totals.calls).toBe(0);
    expect(JSON.parse((await report('?agent=support-bot')).text).totals.calls).toBe(5);
    expect(JSON.parse((await report('?agent=someone-else')).text).totals.calls).toBe(0);
    const from = new Date(t0 + 150).toISOString();
    expect(JSON.parse((await report(`?from=${from}`)).text).totals.calls).toBe(3);
    expect((await report('?from=yesterday')).status).toBe(400);
    expect((await report('?groupBy=colour')).status).toBe(400);
  });

  it('reads an offset typed into the URL as it was written, though form decoding made its "+" a space', async () => {
    // 08:00:00.150Z, 150 ms into the run: the three calls after the first retry. Unescaped, as curl sends it.
    const calls = async (query: string) => JSON.parse((await report(query)).text).totals.calls;
    expect(await calls('?from=2026-11-30T13:30:00.150+05:30')).toBe(3);
    expect(await calls('?from=2026-11-30T13:30:00.150%2B05:30')).toBe(3);
    expect(await calls('?to=2026-11-30T13:30:00.150+0530')).toBe(2);
    expect(await calls('?from=2026-11-30T03:00:00.150-05:00')).toBe(3);
  });

  it('needs a read key: ingest keys and no key are refused', async () => {
    const noKey = await fetch(`${server.url}/api/v1/reports/retry-waste`);
    expect(noKey.status).toBe(401);
    const ingestKey = await fetch(`${server.url}/api/v1/reports/retry-waste`, {
      headers: { authorization: `Bearer ${server.ingestKey}` },
    });
    expect(ingestKey.status).toBe(403);
  });

  it('gives byte-identical output after the read models are rebuilt from the log', async () => {
    const before = await Promise.all(['', '?groupBy=server', '?groupBy=tool'].map((q) => report(q)));
    const { rows: begun } = await sql<{ xid: string }>`SELECT pg_current_xact_id()::text AS xid`.execute(
      server.db,
    );
    await server.app.get(ProjectorService).rebuild();
    // Every call row was written again after the rebuild began, by whichever took the work: the rebuild's own
    // catch-up or the server's projector loop (the number of records rebuild() applied itself depends on which).
    const { rows: calls } = await sql<{ total: number; older: number }>`
      SELECT count(*)::int AS total,
             count(*) FILTER (WHERE xmin::text::bigint <= ${BigInt(begun[0]!.xid) % 4_294_967_296n})::int AS older
        FROM tool_call`.execute(server.db);
    expect(calls[0]).toEqual({ total: 5, older: 0 });
    const after = await Promise.all(['', '?groupBy=server', '?groupBy=tool'].map((q) => report(q)));
    expect(after.map((r) => r.text)).toEqual(before.map((r) => r.text));
  });
});
