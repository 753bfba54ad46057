/**
 * Errata's MCP endpoint answers what REST and the dashboard answer about servers and traces: `list_servers` is
 * `GET /api/v1/servers` (the scorecard) and `get_trace_timeline` is `GET /api/v1/traces/{traceId}` (a page of one
 * trace), the same answers for the same query, the same refusals of bad input as tool errors, and trace ids that the
 * other tools' samples hand out lead there. Real PostgreSQL, spans over OTLP, the MCP SDK client over Streamable HTTP.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { TraceTimelinePage } from '@errata/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectRepository } from '../apps/server/src/repositories/project.repository';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { callErrataTool, expectRefusedAlike } from './support/errata-mcp-tool';
import { generatedCorpus } from './support/generated-corpus';
import { connectErrataMcp, sendSpans, startTestServer, type TestServer } from './support/server';

let server: TestServer;
let client: Client;
const corpus = generatedCorpus({ traces: 20, seed: 11 });
/** The traces sent, by id. */
const traceIds = [...new Set(corpus.map((span) => span.spanContext().traceId))];

beforeAll(async () => {
  server = await startTestServer('postgres');
  expect(await sendSpans(server.url, server.ingestKey, corpus)).toBe(200);
  await server.catchUp();
  client = await connectErrataMcp(server.url, server.readKey);
}, 60_000);
afterAll(async () => {
  await client?.close();
  await server?.close();
});

async function rest(path: string, key = server.readKey): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${server.url}/api/v1/${path}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  return { status: response.status, body: await response.json() };
}

const call = (name: string, args: Record<string, unknown>, on = client) => callErrataTool(on, name, args);

/** The tool's answer and REST's for the same query, which must be the same page. */
async function both(tool: string, args: Record<string, unknown>, path: string) {
  const [mcp, overRest] = await Promise.all([call(tool, args), rest(path)]);
  expect(overRest.status, path).toBe(200);
  expect(mcp, `${tool} ${JSON.stringify(args)}`).toEqual({ ok: true, data: overRest.body, error: null });
  return overRest.body;
}

const refusedAlike = (tool: string, args: Record<string, unknown>, path: string) =>
  expectRefusedAlike({ client, url: server.url, key: server.readKey }, tool, args, path);

type Scorecard = {
  groupCount: number;
  servers: { server: string | null; toolCount: number; tools: { tool: string }[] }[];
};

describe('list_servers', () => {
  it('is listed as a read-only tool like the reports, its bounds in its schema', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const name of ['list_servers', 'get_trace_timeline'])
      expect(byName.get(name)?.annotations, name).toEqual(byName.get('get_retry_waste')?.annotations);
    expect(byName.get('list_servers')?.inputSchema.properties).toMatchObject({
      limit: { type: 'integer', minimum: 1, maximum: 500 },
      toolLimit: { type: 'integer', minimum: 1, maximum: 500 },
      toolOffset: { type: 'integer', minimum: 0 },
      server: { type: 'string' },
    });
  });

  it('answers the scorecard REST answers, for the same filters and pages', async () => {
    const whole = (await both('list_servers', {}, 'servers')) as Scorecard;
    expect(whole.groupCount).toBeGreaterThan(1);
    const named = whole.servers.find((entry) => entry.server !== null && entry.toolCount > 1)!;
    await both(
      'list_servers',
      { server: named.server, toolLimit: 1 },
      `servers?server=${named.server}&toolLimit=1`,
    );
    await both('list_servers', { agent: 'support', to: '2100-01-01' }, 'servers?agent=support&to=2100-01-01');
    // Paged: a server at a time, then a tool at a time, walks the scorecard's servers and each one's tools.
    const servers: (string | null)[] = [];
    for (let offset = 0; offset < whole.groupCount; offset++) {
      const page = (await both(
        'list_servers',
        { limit: 1, offset },
        `servers?limit=1&offset=${offset}`,
      )) as Scorecard;
      servers.push(...page.servers.map((entry) => entry.server));
    }
    expect(servers).toEqual(whole.servers.map((entry) => entry.server));
    const tools: string[] = [];
    for (let toolOffset = 0; toolOffset < named.toolCount; toolOffset++) {
      const page = (await both(
        'list_servers',
        { server: named.server, toolLimit: 1, toolOffset },
        `servers?server=${named.server}&toolLimit=1&toolOffset=${toolOffset}`,
      )) as Scorecard;
      tools.push(...page.servers[0]!.tools.map((entry) => entry.tool));
    }
    expect(tools).toEqual(named.tools.map((entry) => entry.tool));
  });

  it('refuses what REST refuses, in the same words, as a validation tool error', async () => {
    await refusedAlike('list_servers', { toolLimit: 0 }, 'servers?toolLimit=0');
    await refusedAlike('list_servers', { toolLimit: 501 }, 'servers?toolLimit=501');
    await refusedAlike('list_servers', { limit: 501 }, 'servers?limit=501');
    await refusedAlike(
      'list_servers',
      { from: '2026-12-02', to: '2026-12-01' },
      'servers?from=2026-12-02&to=2026-12-01',
    );
    expect((await call('list_servers', { groupBy: 'tool' })).error).toMatchObject({
      code: 'INVALID_ARGUMENTS',
    });
  });
});

type Sample = { traceId: string; spanId: string };

describe('get_trace_timeline', () => {
  /** The trace with the most items, and the whole of it (one page of 1,000). */
  let traceId: string;
  let whole: TraceTimelinePage;

  beforeAll(async () => {
    const pages = await Promise.all(
      traceIds.map(async (id) => (await rest(`traces/${id}?limit=1000`)).body as TraceTimelinePage),
    );
    whole = pages.reduce((most, page) => (page.itemCount > most.itemCount ? page : most));
    traceId = whole.traceId;
    expect(whole.items.length).toBeGreaterThan(4);
    expect(whole.runs.length).toBeGreaterThan(1);
  });

  it('answers the page REST answers, and pages through the trace with the cursors it hands out', async () => {
    await both('get_trace_timeline', { traceId }, `traces/${traceId}`);
    const seen: string[] = [];
    let page = (await both(
      'get_trace_timeline',
      { traceId, limit: 2 },
      `traces/${traceId}?limit=2`,
    )) as TraceTimelinePage;
    seen.push(...page.items.map((item) => item.spanId));
    while (page.page.after !== null) {
      const after = page.page.after;
      page = (await both(
        'get_trace_timeline',
        { traceId, limit: 2, after },
        `traces/${traceId}?limit=2&after=${encodeURIComponent(after)}`,
      )) as TraceTimelinePage;
      seen.push(...page.items.map((item) => item.spanId));
    }
    expect(seen).toEqual(whole.items.map((item) => item.spanId));
    // And back: the page before the last one.
    const before = page.page.before!;
    const back = (await both(
      'get_trace_timeline',
      { traceId, limit: 2, before },
      `traces/${traceId}?limit=2&before=${encodeURIComponent(before)}`,
    )) as TraceTimelinePage;
    expect(back.page.offset).toBe(page.page.offset - 2);
    // One run's items, and the runs listed from a position.
    const run = whole.runs[1]!.runId;
    const ofRun = (await both(
      'get_trace_timeline',
      { traceId, run, limit: 1 },
      `traces/${traceId}?run=${encodeURIComponent(run)}&limit=1`,
    )) as TraceTimelinePage;
    expect(ofRun.page.total).toBe(whole.runs[1]!.itemCount);
    await both('get_trace_timeline', { traceId, runOffset: 1 }, `traces/${traceId}?runOffset=1`);
  });

  it("leads from the other tools' samples to the page around their call", async () => {
    const waste = (await call('get_retry_waste', {})).data as { groups: { samples: Sample[] }[] };
    const misclassified = (await call('list_misclassified_results', {})).data as {
      groups: { samples: Sample[] }[];
    };
    const findings = (await call('list_findings', {})).data as { findings: { id: string }[] };
    const fix = (await call('get_fix_suggestion', { findingId: findings.findings[0]!.id })).data as {
      finding: { samples: Sample[] };
    };
    const samples = [
      waste.groups.flatMap((group) => group.samples)[0],
      misclassified.groups.flatMap((group) => group.samples)[0],
      fix.finding.samples[0],
    ];
    for (const sample of samples) {
      expect(sample).toMatchObject({ traceId: expect.any(String), spanId: expect.any(String) });
      const { traceId: sampled, spanId } = sample!;
      const page = (await both(
        'get_trace_timeline',
        { traceId: sampled, span: spanId, limit: 3 },
        `traces/${sampled}?span=${spanId}&limit=3`,
      )) as TraceTimelinePage;
      expect(page.items.map((item) => item.spanId)).toContain(spanId);
    }
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'get_trace_timeline')?.description).toMatch(
      /samples of get_retry_waste, list_misclassified_results and get_fix_suggestion.*traceId.*span/s,
    );
  });

  it('refuses bad input as REST does, in the same words, as validation tool errors', async () => {
    const id = traceId;
    expect(await refusedAlike('get_trace_timeline', { traceId: 'TRACE-1' }, 'traces/TRACE-1')).toBe(
      '"TRACE-1" is not a trace id (32 lowercase hex digits)',
    );
    await refusedAlike('get_trace_timeline', { traceId: id, limit: 0 }, `traces/${id}?limit=0`);
    await refusedAlike('get_trace_timeline', { traceId: id, limit: 1001 }, `traces/${id}?limit=1001`);
    await refusedAlike('get_trace_timeline', { traceId: id, runOffset: -1 }, `traces/${id}?runOffset=-1`);
    const span = whole.items[0]!.spanId;
    expect(
      await refusedAlike(
        'get_trace_timeline',
        { traceId: id, span, after: 'x' },
        `traces/${id}?span=${span}&after=x`,
      ),
    ).toBe('"after", "before" and "span" each say where the page is: give one of them');
    await refusedAlike(
      'get_trace_timeline',
      { traceId: id, after: 'not-a-cursor' },
      `traces/${id}?after=not-a-cursor`,
    );
    await refusedAlike('get_trace_timeline', { traceId: id, span: 'SPAN' }, `traces/${id}?span=SPAN`);
  });

  it('of two bad arguments, refuses the one REST refuses', async () => {
    const id = traceId;
    expect(
      await refusedAlike(
        'get_trace_timeline',
        { traceId: id, span: 'SPAN', after: 'x' },
        `traces/${id}?span=SPAN&after=x`,
      ),
    ).toBe('"after", "before" and "span" each say where the page is: give one of them');
    expect(
      await refusedAlike(
        'get_trace_timeline',
        { traceId: id, after: 'not-a-cursor', runOffset: -1 },
        `traces/${id}?after=not-a-cursor&runOffset=-1`,
      ),
    ).toMatch(/^"after" must be a cursor/);
    await refusedAlike('get_trace_timeline', { traceId: 'TRACE-1', limit: 0 }, 'traces/TRACE-1?limit=0');
    // The bounds REST checks still in the schema, for a client to check before calling.
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'get_trace_timeline')?.inputSchema.properties).toMatchObject({
      traceId: { type: 'string', pattern: '^[0-9a-f]{32}$' },
      limit: { type: 'integer', minimum: 1, maximum: 1000 },
      span: { type: 'string', pattern: '^[0-9a-f]{16}$' },
      runOffset: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
    });
  });

  it('answers a trace or an item it does not have with a tool error that says what to do instead', async () => {
    const missing = 'f'.repeat(32);
    expect((await rest(`traces/${missing}`)).status).toBe(404);
    const noTrace = await call('get_trace_timeline', { traceId: missing });
    expect(noTrace.error).toEqual({
      errorCategory: 'validation',
      isRetryable: true,
      code: 'TRACE_NOT_FOUND',
      description: expect.stringMatching(
        new RegExp(
          `^no trace ${missing} in this project\\. Trace ids come from the samples of get_retry_waste`,
        ),
      ) as string,
    });
    const span = 'f'.repeat(16);
    expect((await rest(`traces/${traceId}?span=${span}`)).status).toBe(404);
    expect((await call('get_trace_timeline', { traceId, span })).error).toEqual({
      errorCategory: 'validation',
      isRetryable: true,
      code: 'SPAN_NOT_FOUND',
      description: expect.stringMatching(/^no item f{16} in trace \w+\. Call again without `span`/) as string,
    });
    // A run the trace does not have: not an empty page, which would read as a run that did nothing.
    const noRun = await rest(`traces/${traceId}?run=no-such-run`);
    expect(noRun).toEqual({
      status: 404,
      body: expect.objectContaining({ message: `no run no-such-run in trace ${traceId}` }) as object,
    });
    expect((await call('get_trace_timeline', { traceId, run: 'no-such-run' })).error).toEqual({
      errorCategory: 'validation',
      isRetryable: true,
      code: 'RUN_NOT_FOUND',
      description: expect.stringMatching(
        new RegExp(`^no run no-such-run in trace ${traceId}\\. Call again without \`run\``),
      ) as string,
    });
    // An item of the trace, asked for in a run it is not of: the whole trace's page holds it.
    const [first, other] = whole.runs;
    const item = whole.items.find((entry) => entry.runId === other!.runId)!;
    const inRun = await call('get_trace_timeline', { traceId, run: first!.runId, span: item.spanId });
    expect(inRun.error).toMatchObject({
      code: 'SPAN_NOT_FOUND',
      description: expect.stringContaining('Call again without `run`') as string,
    });
  });
});

describe('keys', () => {
  it("of another project see none of this project's servers or traces; an ingest key is refused", async () => {
    const keys = server.app.get(ApiKeyService);
    const other = await server.app.get(ProjectRepository).ensureProject('servers-and-timelines-other');
    const otherRead = (await keys.create(other.id, 'read', 'cli')).key;
    const otherClient = await connectErrataMcp(server.url, otherRead);
    try {
      const scorecard = await call('list_servers', {}, otherClient);
      expect(scorecard.data).toMatchObject({ groupCount: 0, servers: [] });
      expect(scorecard.data).toEqual((await rest('servers', otherRead)).body);
      const traceId = traceIds[0]!;
      expect((await rest(`traces/${traceId}`)).status).toBe(200);
      expect((await call('get_trace_timeline', { traceId }, otherClient)).error).toMatchObject({
        code: 'TRACE_NOT_FOUND',
      });
      expect((await rest(`traces/${traceId}`, otherRead)).status).toBe(404);
    } finally {
      await otherClient.close();
    }
    await expect(connectErrataMcp(server.url, server.ingestKey)).rejects.toThrow(/403/);
    const toolCall = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${server.ingestKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'get_trace_timeline', arguments: { traceId: traceIds[0] } },
      }),
    });
    expect(toolCall.status).toBe(403);
  });
});
