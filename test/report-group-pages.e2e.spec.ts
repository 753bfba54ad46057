import { SERIES_CALL_MEASURES } from '@errata/domain';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CallNames } from '../apps/dashboard/src/components/name-combobox';
import { RollupQueryRepository } from '../apps/server/src/repositories/rollup-query.repository';
import { seriesBuckets } from '../apps/server/src/rollups/window-slices';
import { AgentTrace, type ToolCallSpec } from './support/agent-spans';
import {
  connectErrataMcp,
  defaultProjectId,
  sendSpans,
  startTestServer,
  type TestServer,
} from './support/server';

/** Tools each retried once, wastefully (a business failure sent again with the same arguments). */
const RETRIED_TOOLS = 1_200;
/** Tools answering an empty result as an error (empty-as-error), once each. */
const EMPTY_AS_ERROR_TOOLS = 60;
const t0 = Date.UTC(2026, 10, 30, 8, 0, 0);

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer('postgres');
  // One run (trace) per hundred tools, as many agents would send them.
  for (let first = 0; first < RETRIED_TOOLS; first += 100) {
    const agentTrace = new AgentTrace();
    const calls: ToolCallSpec[] = [];
    for (let i = first; i < first + 100; i++) {
      const start = t0 + i * 1_000;
      const failure = { tool: `tool-${i}`, isError: true, category: 'business', text: 'over the limit' };
      calls.push({ ...failure, startMs: start, durationMs: 1 });
      // Retries of 1 to 40 ms: many groups waste alike, and are then ordered by key.
      calls.push({ ...failure, startMs: start + 100, durationMs: 1 + (i % 40) });
    }
    expect(await sendSpans(server.url, server.ingestKey, agentTrace.run(`agent-${first}`, t0, calls))).toBe(
      200,
    );
  }
  const empties = new AgentTrace();
  const emptyCalls = Array.from({ length: EMPTY_AS_ERROR_TOOLS }, (_, j) => ({
    tool: `lookup-${j}`,
    server: `srv-${j}`, // a server each: with test-server, 61 servers on the scorecard
    startMs: t0 + j * 10,
    durationMs: 1,
    isError: true,
    empty: true,
    text: 'No results found',
  }));
  expect(await sendSpans(server.url, server.ingestKey, empties.run('empties', t0, emptyCalls))).toBe(200);
  await server.catchUp();
}, 300_000);

afterAll(async () => {
  await server?.close();
});

interface Group {
  readonly key: string;
  readonly tool: string;
  readonly retries: number;
  readonly wastedRetries: number;
  readonly wastedMs: number;
  readonly samples: readonly unknown[];
}

/** A grouped report: its page of groups and the counts around it. */
interface GroupedReport {
  readonly groupCount: number;
  readonly limit: number;
  readonly offset: number;
  readonly totals: Record<string, number>;
  readonly groups: readonly Group[];
}

async function read(path: string) {
  const response = await fetch(`${server.url}${path}`, {
    headers: { authorization: `Bearer ${server.readKey}` },
  });
  return { status: response.status, body: (await response.json()) as GroupedReport };
}

const byText = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);

it('answers the top 50 retry-waste groups by default, with groupCount, in the report order; offset pages through every group, and the totals are over all of them', async () => {
  const first = await read('/api/v1/reports/retry-waste?groupBy=tool');
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({ groupCount: RETRIED_TOOLS, limit: 50, offset: 0 });
  expect(first.body.groups).toHaveLength(50);

  const pages: Group[] = [];
  for (const offset of [0, 500, 1_000]) {
    const page = await read(`/api/v1/reports/retry-waste?groupBy=tool&limit=500&offset=${offset}`);
    expect(page.status).toBe(200);
    expect(page.body.groupCount).toBe(RETRIED_TOOLS);
    expect(page.body.totals).toEqual(first.body.totals);
    pages.push(...page.body.groups);
  }
  expect(pages).toHaveLength(RETRIED_TOOLS);
  expect(new Set(pages.map((group) => group.key)).size).toBe(RETRIED_TOOLS);
  // Most wasted time first, then wasted retries, retries, key: the order a page is cut from.
  const ordered = [...pages].sort(
    (x, y) =>
      y.wastedMs - x.wastedMs ||
      y.wastedRetries - x.wastedRetries ||
      y.retries - x.retries ||
      byText(x.key, y.key),
  );
  expect(pages.map((group) => group.key)).toEqual(ordered.map((group) => group.key));
  // i % 40 = 39 wastes 40 ms; of those, tool-1039 comes first in code-unit order.
  expect(pages[0]).toMatchObject({ key: 'test-server/tool-1039', wastedMs: 40 });
  expect(first.body.groups).toEqual(pages.slice(0, 50));
  // Each group still has its samples.
  expect(pages.every((group) => group.samples.length === 1)).toBe(true);

  // The totals count every group, not the page.
  const totals = first.body.totals;
  expect(totals.wastedRetries).toBe(RETRIED_TOOLS);
  expect(totals.wastedMs).toBe(pages.reduce((sum, group) => sum + group.wastedMs, 0));
  expect(totals.calls).toBe(2 * RETRIED_TOOLS + EMPTY_AS_ERROR_TOOLS);

  const offsetPage = await read('/api/v1/reports/retry-waste?groupBy=tool&limit=7&offset=993');
  expect(offsetPage.body.groups).toEqual(pages.slice(993, 1_000));
  const pastTheEnd = await read('/api/v1/reports/retry-waste?groupBy=tool&offset=5000');
  expect(pastTheEnd.body).toMatchObject({ groupCount: RETRIED_TOOLS, groups: [], totals });

  // By category: one group, and the same totals.
  const byCategory = await read('/api/v1/reports/retry-waste');
  expect(byCategory.body).toMatchObject({ groupCount: 1, totals, groups: [{ key: 'business' }] });

  for (const bad of ['limit=0', 'limit=501', 'offset=-1', 'limit=ten']) {
    const refused = await read(`/api/v1/reports/retry-waste?groupBy=tool&${bad}`);
    expect(refused.status, bad).toBe(400);
  }
}, 120_000);

it('pages the misclassified results likewise, most offences first, totals over every group', async () => {
  const first = await read('/api/v1/reports/misclassified-results?limit=25');
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({ groupCount: EMPTY_AS_ERROR_TOOLS, limit: 25, offset: 0 });
  expect(first.body.groups).toHaveLength(25);
  expect(first.body.totals).toMatchObject({ emptyAsError: EMPTY_AS_ERROR_TOOLS });
  const rest = await read('/api/v1/reports/misclassified-results?limit=50&offset=25');
  expect(rest.body.groups).toHaveLength(EMPTY_AS_ERROR_TOOLS - 25);
  expect(rest.body.totals).toEqual(first.body.totals);
  const tools = [...first.body.groups, ...rest.body.groups].map((group) => group.tool);
  expect(tools).toEqual(Array.from({ length: EMPTY_AS_ERROR_TOOLS }, (_, j) => `lookup-${j}`).sort(byText));
}, 60_000);

it('bounds the MCP tools the same way', async () => {
  const client = await connectErrataMcp(server.url, server.readKey);
  try {
    const answer = await client.callTool({ name: 'get_retry_waste', arguments: { groupBy: 'tool' } });
    const { data } = answer.structuredContent as { data: GroupedReport };
    expect(data).toMatchObject({ groupCount: RETRIED_TOOLS, limit: 50, offset: 0 });
    expect(data.groups).toHaveLength(50);
    const paged = await client.callTool({
      name: 'get_retry_waste',
      arguments: { groupBy: 'tool', limit: 3, offset: 1_198 },
    });
    expect((paged.structuredContent as { data: GroupedReport }).data.groups).toHaveLength(2);
  } finally {
    await client.close();
  }
}, 60_000);

it('pages the server scorecard by name, with groupCount, reading only the servers on the page', async () => {
  interface Scorecard {
    readonly groupCount: number;
    readonly limit: number;
    readonly offset: number;
    readonly toolLimit: number;
    readonly servers: readonly {
      readonly server: string;
      readonly calls: number;
      readonly toolCount: number;
      readonly tools: readonly { readonly tool: string; readonly calls: number }[];
    }[];
  }
  const get = async (query: string, status = 200) => {
    const response = await fetch(`${server.url}/api/v1/servers${query}`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(response.status, query).toBe(status);
    return (await response.json()) as Scorecard;
  };
  const names = ['test-server', ...Array.from({ length: EMPTY_AS_ERROR_TOOLS }, (_, j) => `srv-${j}`)].sort(
    byText,
  );
  const first = await get('');
  expect(first).toMatchObject({ groupCount: names.length, limit: 50, offset: 0 });
  expect(first.servers.map((score) => score.server)).toEqual(names.slice(0, 50));
  const rest = await get('?offset=50');
  expect(rest.servers.map((score) => score.server)).toEqual(names.slice(50));
  expect((await get('?server=srv-7')).servers.map((score) => score.server)).toEqual(['srv-7']);
}, 60_000);

it('lists the first 50 tools of a server with 1,200 (toolLimit raises it to 500, toolOffset pages on), with toolCount, its figures over all of them', async () => {
  const testServer = async (query: string) => {
    const response = await fetch(`${server.url}/api/v1/servers?server=test-server${query}`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(response.status, query).toBe(200);
    const body = (await response.json()) as {
      toolLimit: number;
      toolOffset: number;
      servers: { calls: number; toolCount: number; tools: { tool: string; calls: number }[] }[];
    };
    return { toolLimit: body.toolLimit, toolOffset: body.toolOffset, ...body.servers[0]! };
  };
  const first = await testServer('');
  expect(first).toMatchObject({ toolLimit: 50, toolCount: RETRIED_TOOLS, calls: 2 * RETRIED_TOOLS });
  expect(first.tools).toHaveLength(50);
  // Every tool alike (two calls, none violating): by name.
  const names = Array.from({ length: RETRIED_TOOLS }, (_, i) => `tool-${i}`).sort(byText);
  expect(first.tools.map((tool) => tool.tool)).toEqual(names.slice(0, 50));
  const raised = await testServer('&toolLimit=500');
  expect(raised).toMatchObject({ toolLimit: 500, toolCount: RETRIED_TOOLS, calls: 2 * RETRIED_TOOLS });
  expect(raised.tools.map((tool) => tool.tool)).toEqual(names.slice(0, 500));
  // A page of its tools further on, the last one short; past the last, none, and the counts all the same.
  const paged = await testServer('&toolOffset=1150&toolLimit=100');
  expect(paged).toMatchObject({ toolLimit: 100, toolOffset: 1_150, toolCount: RETRIED_TOOLS });
  expect(paged.tools.map((tool) => tool.tool)).toEqual(names.slice(1_150));
  expect(await testServer('&toolOffset=5000')).toMatchObject({
    toolOffset: 5_000,
    toolCount: RETRIED_TOOLS,
    calls: 2 * RETRIED_TOOLS,
    tools: [],
  });
  for (const bad of ['toolOffset=-1', 'toolOffset=some']) {
    const response = await fetch(`${server.url}/api/v1/servers?${bad}`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(response.status, bad).toBe(400);
    expect(((await response.json()) as { message: string }).message).toContain(
      '"toolOffset" must be a whole number',
    );
  }
  for (const bad of ['toolLimit=0', 'toolLimit=501', 'toolLimit=many']) {
    const response = await fetch(`${server.url}/api/v1/servers?${bad}`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(response.status, bad).toBe(400);
    expect(((await response.json()) as { message: string }).message).toContain(
      '"toolLimit" must be a whole number from 1 to 500',
    );
  }
}, 60_000);

it('bounds the time series by tool to its top groups over the window, folding the rest, each point adding up', async () => {
  interface Series {
    readonly groupLimit: number;
    readonly keptGroups: readonly string[];
    readonly foldedGroups: number;
    readonly points: readonly {
      readonly wastedRetries: number;
      readonly wastedMs: number;
      readonly wastedRetriesBy: Record<string, number>;
      readonly wastedMsBy: Record<string, number>;
      readonly foldedWastedRetries: number;
      readonly foldedWastedMs: number;
    }[];
  }
  const series = async (query: string, status = 200) => {
    const window = `from=${new Date(t0 - 3_600_000).toISOString()}&to=${new Date(t0 + 2 * 3_600_000).toISOString()}`;
    const response = await fetch(`${server.url}/api/v1/reports/timeseries?${window}&step=hour&${query}`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    const text = await response.text();
    expect(response.status, query).toBe(status);
    return { size: text.length, body: JSON.parse(text) as Series & { message: string } };
  };
  const sum = (record: Record<string, number>) => Object.values(record).reduce((a, b) => a + b, 0);
  // Every tool wasted one retry: ties by key.
  const keys = Array.from({ length: RETRIED_TOOLS }, (_, i) => `test-server/tool-${i}`).sort(byText);
  const { size, body } = await series('groupBy=tool');
  expect(body).toMatchObject({
    groupLimit: 10,
    keptGroups: keys.slice(0, 10),
    foldedGroups: RETRIED_TOOLS - 10,
  });
  expect(size).toBeLessThan(5_000);
  expect(body.points).toHaveLength(3);
  for (const point of body.points) {
    expect(Object.keys(point.wastedRetriesBy).every((key) => body.keptGroups.includes(key))).toBe(true);
    expect(sum(point.wastedRetriesBy) + point.foldedWastedRetries).toBe(point.wastedRetries);
    expect(sum(point.wastedMsBy) + point.foldedWastedMs).toBe(point.wastedMs);
  }
  expect(body.points[1]).toMatchObject({
    wastedRetries: RETRIED_TOOLS,
    foldedWastedRetries: RETRIED_TOOLS - 10,
  });
  // Every retry in the hour of t0 wasted its own 1 to 40 ms (tool-i: 1 + i % 40): the kept tools show theirs, the
  // folded ones add up to the rest; the hours around it have nothing.
  const msOf = (key: string) => 1 + (Number(key.slice('test-server/tool-'.length)) % 40);
  const allMs = keys.reduce((total, key) => total + msOf(key), 0);
  const keptMs = (limit: number) => keys.slice(0, limit).reduce((total, key) => total + msOf(key), 0);
  expect(body.points[1]).toMatchObject({ wastedMs: allMs, foldedWastedMs: allMs - keptMs(10) });
  expect(body.points[1]!.wastedRetriesBy).toEqual(
    Object.fromEntries(keys.slice(0, 10).map((key) => [key, 1])),
  );
  expect(body.points[1]!.wastedMsBy).toEqual(
    Object.fromEntries(keys.slice(0, 10).map((key) => [key, msOf(key)])),
  );
  for (const point of [body.points[0]!, body.points[2]!]) {
    expect(point).toMatchObject({ wastedRetries: 0, foldedWastedRetries: 0, foldedWastedMs: 0 });
    expect([point.wastedRetriesBy, point.wastedMsBy]).toEqual([{}, {}]);
  }

  // The read itself carries the kept tools' rows only: the other 1,190 are ranked, summed and counted in SQL.
  const [from, to] = [new Date(t0 - 3_600_000), new Date(t0 + 2 * 3_600_000)];
  const read = await server.app
    .get(RollupQueryRepository)
    .seriesSums(
      { projectId: await defaultProjectId(server.db), from, to, server: null, tool: null, agent: null },
      seriesBuckets(from, to, 'hour'),
      'hour',
      SERIES_CALL_MEASURES,
      'tool',
      10,
    );
  expect(read.foldedGroups).toBe(RETRIED_TOOLS - 10);
  expect(read.points.map((point) => point.calls.length)).toEqual([0, 10, 0]);
  expect(read.points[1]!.folded).toMatchObject({
    wastedRetries: RETRIED_TOOLS - 10,
    wastedMs: allMs - keptMs(10),
  });

  const widest = await series('groupBy=tool&groupLimit=100');
  expect(widest.body).toMatchObject({ keptGroups: keys.slice(0, 100), foldedGroups: RETRIED_TOOLS - 100 });
  expect(Object.keys(widest.body.points[1]!.wastedRetriesBy)).toHaveLength(100);
  expect(widest.body.points[1]).toMatchObject({
    foldedWastedRetries: RETRIED_TOOLS - 100,
    foldedWastedMs: allMs - keptMs(100),
  });
  // Within one hour's window (a clipped bucket, read from the contributions): cut alike.
  const clipped = await (
    await fetch(
      `${server.url}/api/v1/reports/timeseries?from=${new Date(t0).toISOString()}&to=${new Date(t0 + 1_800_000).toISOString()}&step=hour&groupBy=tool&groupLimit=3`,
      { headers: { authorization: `Bearer ${server.readKey}` } },
    )
  ).json();
  expect(clipped).toMatchObject({
    keptGroups: keys.slice(0, 3),
    foldedGroups: RETRIED_TOOLS - 3,
    points: [
      {
        wastedRetries: RETRIED_TOOLS,
        foldedWastedRetries: RETRIED_TOOLS - 3,
        foldedWastedMs: allMs - keptMs(3),
      },
    ],
  });
  // By category, one group: nothing folded.
  const byCategory = await series('');
  expect(byCategory.body).toMatchObject({ keptGroups: ['business'], foldedGroups: 0 });
  expect(byCategory.body.points[1]).toMatchObject({ foldedWastedRetries: 0, foldedWastedMs: 0 });
  for (const bad of ['groupLimit=0', 'groupLimit=101', 'groupLimit=all']) {
    expect((await series(`groupBy=tool&${bad}`, 400)).body.message).toContain(
      '"groupLimit" must be a whole number from 1 to 100',
    );
  }
}, 60_000);

/** `GET /api/v1/names`' answer, as the dashboard reads it, or a 400's. */
type Names = CallNames & { readonly message?: string };

/** `GET /api/v1/names` with `query`, answered `status`: the answer and its size. */
async function names(query: string, status = 200, key: string | null = server.readKey) {
  const response = await fetch(`${server.url}/api/v1/names${query}`, {
    headers: key === null ? {} : { authorization: `Bearer ${key}` },
  });
  const text = await response.text();
  expect(response.status, query).toBe(status);
  return { size: text.length, body: JSON.parse(text) as Names };
}

it('lists the server, tool and agent names of the window for the filters, by name, cut at limit with how many there are, without a key refused', async () => {
  const at = (ms: number) => new Date(t0 + ms).toISOString();
  const servers = ['test-server', ...Array.from({ length: EMPTY_AS_ERROR_TOOLS }, (_, j) => `srv-${j}`)].sort(
    byText,
  );
  const retried = (from: number, to: number) =>
    Array.from({ length: to - from }, (_, k) => `tool-${from + k}`);
  const lookups = Array.from({ length: EMPTY_AS_ERROR_TOOLS }, (_, j) => `lookup-${j}`);
  const allTools = [...retried(0, RETRIED_TOOLS), ...lookups].sort(byText);
  // A run per hundred retried tools, and the empties' run.
  const agents = [
    ...Array.from({ length: RETRIED_TOOLS / 100 }, (_, k) => `agent-${k * 100}`),
    'empties',
  ].sort(byText);

  // Every name: 61 servers, 1,260 tool names cut at the default (and largest) limit of 1,000, and 13 agents.
  const all = await names('');
  expect(all.body).toEqual({
    limit: 1_000,
    search: null,
    serverCount: servers.length,
    servers,
    toolCount: allTools.length,
    tools: allTools.slice(0, 1_000),
    agentCount: agents.length,
    agents,
  });
  expect(all.size).toBeLessThan(20_000);
  // A server's tools; the servers and agents all the same.
  const testServer = await names('?server=test-server');
  expect(testServer.body).toMatchObject({
    serverCount: servers.length,
    servers,
    toolCount: RETRIED_TOOLS,
    agents,
  });
  expect(testServer.body.tools).toEqual(retried(0, RETRIED_TOOLS).sort(byText).slice(0, 1_000));
  expect((await names('?server=srv-7')).body).toMatchObject({ toolCount: 1, tools: ['lookup-7'] });
  expect((await names('?server=nobody')).body).toMatchObject({
    serverCount: servers.length,
    toolCount: 0,
    tools: [],
  });
  // A smaller bound cuts every list, by name; the counts still say how many there are.
  expect((await names('?limit=5')).body).toEqual({
    limit: 5,
    search: null,
    serverCount: servers.length,
    servers: servers.slice(0, 5),
    toolCount: allTools.length,
    tools: allTools.slice(0, 5),
    agentCount: agents.length,
    agents: agents.slice(0, 5),
  });

  // The window: 08:10–08:15 is read from the contributions (a partial hour), the test server's calls alone in it.
  expect((await names(`?from=${at(600_000)}&to=${at(900_000)}`)).body).toMatchObject({
    serverCount: 1,
    servers: ['test-server'],
    toolCount: 300,
    tools: retried(600, 900).sort(byText),
    agentCount: 3,
    agents: ['agent-600', 'agent-700', 'agent-800'],
  });
  // 07:30–08:00:00.500 holds the first lookups, 08:00 is whole hours and days from the rollups.
  const first = await names(`?from=${at(-1_800_000)}&to=${at(500)}`);
  expect(first.body).toMatchObject({ serverCount: 51, toolCount: 51, agents: ['agent-0', 'empties'] });
  expect(first.body.tools).toEqual(['lookup-0', ...lookups.slice(1, 50), 'tool-0'].sort(byText));
  expect((await names(`?from=${at(-3_600_000)}&to=${at(3_600_000)}`)).body).toMatchObject({
    serverCount: servers.length,
    toolCount: allTools.length,
    agentCount: agents.length,
  });
  expect((await names('?from=2026-11-30&to=2026-12-01')).body.toolCount).toBe(allTools.length);
  expect((await names('?from=2026-11-29&to=2026-11-30')).body).toEqual({
    limit: 1_000,
    search: null,
    serverCount: 0,
    servers: [],
    toolCount: 0,
    tools: [],
    agentCount: 0,
    agents: [],
  });

  // Calls whose server did not say its name are the null server, and `(unknown)` lists their tools.
  const nameless = new AgentTrace().run('nameless', t0 - 2 * 86_400_000, [
    {
      tool: 'mystery',
      startMs: t0 - 2 * 86_400_000 + 1,
      durationMs: 1,
      extra: { 'errata.server.name': undefined },
    },
  ]);
  // A subagent that made no call but escalated and reported back is an agent to filter by all the same; an agent
  // without a name goes by its id, as `agent` selects it.
  const handBack = new AgentTrace().subagentHandBack('reporter', t0 - 2 * 86_400_000 + 10);
  const idOnly = new AgentTrace().run(
    '', // "invoke_agent ": no name in the span's name either
    t0 - 2 * 86_400_000 + 20,
    [{ tool: 'mystery', server: 'srv-0', startMs: t0 - 2 * 86_400_000 + 21, durationMs: 1 }],
    'coordinator',
    { 'gen_ai.agent.name': undefined, 'gen_ai.agent.id': 'agent-id-7' },
  );
  expect(await sendSpans(server.url, server.ingestKey, [...nameless, ...handBack, ...idOnly])).toBe(200);
  await server.catchUp();
  expect((await names('?from=2026-11-28&to=2026-11-29')).body).toMatchObject({
    servers: [null, 'srv-0'],
    tools: ['mystery'],
    agentCount: 3,
    agents: ['agent-id-7', 'nameless', 'reporter'],
  });
  const byId = await fetch(
    `${server.url}/api/v1/reports/misclassified-results?from=2026-11-28&to=2026-11-29&agent=agent-id-7`,
    {
      headers: { authorization: `Bearer ${server.readKey}` },
    },
  );
  expect(((await byId.json()) as { totals: { calls: number } }).totals.calls).toBe(1);
  const unknown = await names(`?server=${encodeURIComponent('(unknown)')}`);
  expect(unknown.body).toMatchObject({ serverCount: servers.length + 1, toolCount: 1, tools: ['mystery'] });
  expect(unknown.body.servers[0]).toBeNull();

  for (const [bad, message] of [
    ['limit=0', '"limit" must be a whole number from 1 to 1000'],
    ['limit=1001', '"limit" must be a whole number from 1 to 1000'],
    ['limit=all', '"limit" must be a whole number from 1 to 1000'],
    ['from=nope', '"from" must be an ISO-8601 date'],
    ['from=2026-12-01&to=2026-11-30', '"from" must be before "to"'],
    ['server=a&server=b', 'server'],
    ['agent=planner', 'agent'],
    ['tool=tool-1', 'tool'],
  ]) {
    expect((await names(`?${bad}`, 400)).body.message, bad).toContain(message);
  }
  await names('', 401, null);
  await names('', 403, server.ingestKey);
}, 60_000);

it('finds the names that contain a search, in any case, beyond the first 1,000 too; the unnamed server by its label; a bad search is a 400 that says why', async () => {
  // 1,260 tool names: `tool-999` and its like sort past the first 1,000 and are not listed without a search.
  expect((await names('')).body.tools).not.toContain('tool-999');
  // Part of a name, not its start, in another case; each list and count keeps what contains it.
  const nines = await names('?search=OOL-99');
  expect(nines.body).toEqual({
    limit: 1_000,
    search: 'OOL-99',
    serverCount: 0,
    servers: [],
    toolCount: 11,
    tools: ['tool-99', ...Array.from({ length: 10 }, (_, k) => `tool-99${k}`)],
    agentCount: 0,
    agents: [],
  });
  expect((await names('?search=Srv-1')).body).toMatchObject({
    serverCount: 11,
    servers: ['srv-1', ...Array.from({ length: 10 }, (_, k) => `srv-1${k}`)],
    toolCount: 0,
  });
  expect((await names('?search=GENT-1')).body).toMatchObject({
    agentCount: 3,
    agents: ['agent-100', 'agent-1000', 'agent-1100'],
  });
  // With `server`, its tools that match; with `limit`, the first of them, counted all the same.
  expect((await names('?server=srv-12&search=KUP')).body).toMatchObject({
    toolCount: 1,
    tools: ['lookup-12'],
  });
  expect((await names('?server=srv-12&search=tool')).body).toMatchObject({ toolCount: 0, tools: [] });
  expect((await names('?search=tool-11&limit=3')).body).toMatchObject({
    toolCount: 111, // tool-11, tool-110…119, tool-1100…1199
    tools: ['tool-11', 'tool-110', 'tool-1100'],
  });
  // `%` and `_` are themselves, not LIKE's wildcards; an empty search is none.
  expect((await names('?search=%25')).body).toMatchObject({ serverCount: 0, toolCount: 0, agentCount: 0 });
  expect((await names('?search=_')).body).toMatchObject({ serverCount: 0, toolCount: 0, agentCount: 0 });
  expect((await names('?from=2026-11-30&search=')).body).toMatchObject({ search: null, toolCount: 1_260 });

  // Calls whose server did not say its name: found as the dashboard labels them, `(unknown)`, which lists their tools.
  const day = Date.UTC(2026, 10, 27, 12, 0, 0);
  const nameless = new AgentTrace().run('nameless-27', day, [
    { tool: 'Riddle', startMs: day + 1, durationMs: 1, extra: { 'errata.server.name': undefined } },
  ]);
  expect(await sendSpans(server.url, server.ingestKey, nameless)).toBe(200);
  await server.catchUp();
  const window = 'from=2026-11-27&to=2026-11-28';
  expect((await names(`?${window}&search=UNKN`)).body).toMatchObject({ serverCount: 1, servers: [null] });
  expect((await names(`?${window}&search=test`)).body).toMatchObject({ serverCount: 0, servers: [] });
  expect(
    (await names(`?${window}&server=${encodeURIComponent('(unknown)')}&search=riddle`)).body,
  ).toMatchObject({ serverCount: 0, toolCount: 1, tools: ['Riddle'], agentCount: 0 });

  for (const [bad, message] of [
    ['search=a&search=b', '"search" must be given once'],
    ['search=a%00b', '"search" must not contain a NUL character'],
    [`search=${'x'.repeat(257)}`, '"search" may be 256 characters at most'],
  ]) {
    expect((await names(`?${bad}`, 400)).body.message, bad).toContain(message);
  }
  expect((await names(`?search=${'x'.repeat(256)}`)).body).toMatchObject({ toolCount: 0 });
}, 60_000);
