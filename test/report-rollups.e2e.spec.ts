/**
 * Reports over a window sum hourly and daily rollups, plus the contributions of the partial hours at the window's
 * edges. Here a corpus spanning three days goes through real OTLP ingest in batches (so the projector re-derives
 * traces again and again), and every report over random windows, agents and servers must equal the report shaped
 * from the stored contributions that started in the window, summed directly. A rebuild must give the same
 * rollups, and a late span edge must move a call into the agent run it belongs to.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  boundSeriesGroups,
  compareText,
  DEFAULT_SERIES_GROUPS,
  CALL_MEASURES,
  FINDING_MEASURES,
  REPORT_MEASURES,
  escalationsFromSums,
  findingsFromSums,
  misclassificationSamples,
  misclassifiedFromSums,
  offenceKey,
  offenceTimelines,
  retryWasteFromSums,
  retryWasteSamples,
  RULES_VERSION,
  scorecardFromSums,
  seriesPointFromSums,
  subagentCoverageFromSums,
  sumContributions,
  wastedRetriesOf,
  type CallContribution,
  type CallRole,
  type Contributions,
  type FindingContribution,
  type FindingRule,
  type ReportContribution,
  UNKNOWN_SERVER,
} from '@errata/domain';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectorService } from '../apps/server/src/services/projector.service';
import { AgentTrace } from './support/agent-spans';
import { generatedCorpus } from './support/generated-corpus';
import { sendSpans, startTestServer, type TestServer } from './support/server';

const HOUR = 3_600_000;
const MEASURES: readonly string[] = [...CALL_MEASURES, ...FINDING_MEASURES, ...REPORT_MEASURES];
const START = Date.UTC(2026, 10, 27, 22, 17);
const SPANS = generatedCorpus({ traces: 160, seed: 7, startMs: START, spacingMs: 26 * 60_000 + 7_000 });
const END = START + 160 * (26 * 60_000 + 7_000);
// Agents GET /names lists by more than a name: one known by its id alone, one whose name sorts before lowercase in
// code-unit order, and subagents without a call: with a report alone, an escalation alone, or both (a report or
// escalation without a status or target is dropped).
const OTHER_AGENTS = [0, 1, 2, 3].flatMap((n) => {
  const at = START + 3 * HOUR + n * 17 * HOUR;
  const agents = new AgentTrace();
  // A bare `invoke_agent` span without gen_ai.agent.name: an agent of no name.
  agents.run('', at, [{ tool: 'lookup_order', startMs: at + 1, durationMs: 5 }], 'coordinator', {
    'gen_ai.agent.name': undefined,
    'gen_ai.agent.id': `worker-${n % 2}`,
  });
  agents.run('Zed', at + 7 * HOUR, [
    { tool: 'search_web', server: 'server-1', startMs: at + 7 * HOUR + 1, durationMs: 5 },
  ]);
  const dropped = (left: boolean, attribute: string) => (left ? { [attribute]: undefined } : {});
  return agents.subagentHandBack(
    `helper-${n}`,
    at + 11 * HOUR,
    dropped(n === 1, 'errata.subagent.status'),
    dropped(n === 0, 'errata.escalation.target'),
  );
});

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('postgres');
  // Out of order, in batches of 40 spans: traces cross batches, so they are re-derived as their spans arrive.
  const shuffled = [...SPANS, ...OTHER_AGENTS].sort((a, b) =>
    a.spanContext().spanId.localeCompare(b.spanContext().spanId),
  );
  for (let at = 0; at < shuffled.length; at += 40) await deliver(shuffled.slice(at, at + 40));
  await server.catchUp();
}, 120_000);
afterAll(() => server?.close());

async function deliver(spans: ReadableSpan[]): Promise<void> {
  expect(await sendSpans(server.url, server.ingestKey, spans)).toBe(200);
}

async function api(path: string): Promise<unknown> {
  const response = await fetch(`${server.url}/api/v1/${path}`, {
    headers: { authorization: `Bearer ${server.readKey}` },
  });
  expect(response.status, path).toBe(200);
  return response.json();
}

interface Filter {
  readonly from: Date | null;
  readonly to: Date | null;
  readonly server: string | null;
  readonly agent: string | null;
}

/** The stored contributions that started in the window and match the filter, read straight from the table. */
async function contributionsIn(filter: Filter): Promise<Contributions> {
  const { rows } = await sql<{
    traceId: string;
    spanId: string;
    kind: string;
    part: string;
    startNs: string;
    startTime: Date;
    server: string | null;
    tool: string | null;
    serverVersion: string | null;
    category: string | null;
    evidence: string | null;
    agentName: string | null;
    agentId: string | null;
    runId: string | null;
    measures: Record<string, number>;
    sampleText: string | null;
  }>`
    SELECT encode(c.trace_id, 'hex') AS "traceId", encode(c.span_id, 'hex') AS "spanId", c.kind, c.part,
           c.start_ns::text AS "startNs", c.start_time AS "startTime", c.server, c.tool,
           c.server_version AS "serverVersion", c.category, c.evidence, c.agent_name AS "agentName",
           c.agent_id AS "agentId", c.run_id AS "runId", c.measures, t.sample_text AS "sampleText"
      FROM contribution c
      LEFT JOIN tool_call t ON t.project_id = c.project_id AND t.trace_id = c.trace_id AND t.span_id = c.span_id`.execute(
    server.db,
  );
  const selected = rows.filter(
    (row) =>
      (filter.from === null || row.startTime >= filter.from) &&
      (filter.to === null || row.startTime < filter.to) &&
      (filter.agent === null || row.agentName === filter.agent || row.agentId === filter.agent),
  );
  const placed = (row: (typeof rows)[number]) => ({
    traceId: row.traceId,
    key: row.spanId,
    startNs: BigInt(row.startNs),
    agentName: row.agentName,
    agentId: row.agentId,
  });
  const byServer = (row: (typeof rows)[number]) => filter.server === null || row.server === filter.server;
  return {
    calls: selected
      .filter((row) => row.kind === 'call' && byServer(row))
      .map((row): CallContribution => ({
        ...placed(row),
        role: row.part as CallRole,
        server: row.server,
        tool: row.tool,
        serverVersion: row.serverVersion,
        category: row.category,
        measures: row.measures,
      })),
    findings: selected
      .filter((row) => row.kind === 'finding' && byServer(row))
      .map((row): FindingContribution => ({
        ...placed(row),
        runId: row.runId!,
        server: row.server,
        tool: row.tool!,
        rule: row.part as FindingRule,
        evidence: row.evidence!,
        serverVersion: row.serverVersion,
        sampleText: row.sampleText,
        measures: row.measures,
      })),
    reports: selected
      .filter((row) => row.kind === 'report')
      .map((row): ReportContribution => ({ ...placed(row), measures: row.measures })),
  };
}

const query = (filter: Filter) =>
  [
    filter.from && `from=${filter.from.toISOString()}`,
    filter.to && `to=${filter.to.toISOString()}`,
    filter.server && `server=${encodeURIComponent(filter.server)}`,
    filter.agent && `agent=${encodeURIComponent(filter.agent)}`,
  ]
    .filter(Boolean)
    .join('&');

/** A grouped report as the API pages it by default: its first 50 groups, and how many there are. */
function firstPage<Report extends { readonly groups: readonly unknown[] }>(report: Report) {
  return {
    ...report,
    groupCount: report.groups.length,
    limit: 50,
    offset: 0,
    groups: report.groups.slice(0, 50),
  };
}

/** Every report, shaped by @errata/domain from contributions summed in memory. */
function expectedReports(contributions: Contributions) {
  const sums = sumContributions(contributions);
  const samples = offenceTimelines(contributions.findings, 3);
  const firstOnly = offenceTimelines(contributions.findings, 1);
  const { findings } = findingsFromSums(sums, firstOnly);
  return {
    'reports/retry-waste?groupBy=category': firstPage(
      retryWasteFromSums(
        sums.calls,
        'category',
        retryWasteSamples(wastedRetriesOf(contributions.calls), 'category'),
      ),
    ),
    'reports/retry-waste?groupBy=tool': firstPage(
      retryWasteFromSums(sums.calls, 'tool', retryWasteSamples(wastedRetriesOf(contributions.calls), 'tool')),
    ),
    'reports/escalations': escalationsFromSums(sums.calls),
    'reports/misclassified-results': firstPage(
      misclassifiedFromSums(sums.calls, (server, tool) =>
        misclassificationSamples(
          (['empty-as-error', 'failure-as-empty'] as const).flatMap(
            (rule) => samples.get(offenceKey(server, tool, rule))?.earliest ?? [],
          ),
        ),
      ),
    ),
    'reports/subagent-coverage': subagentCoverageFromSums(sums.reports, sums.calls),
    findings: {
      rulesVersion: RULES_VERSION,
      total: findings.length,
      limit: 50,
      offset: 0,
      findings: findings.slice(0, 50).map(({ samples: _samples, ...finding }) => finding),
    },
    servers: (({ servers, ...scorecard }) => ({
      ...scorecard,
      groupCount: servers.length,
      limit: 50,
      offset: 0,
      toolLimit: 50,
      toolOffset: 0,
      servers: servers.slice(0, 50),
    }))(scorecardFromSums(sums)),
  };
}

/**
 * `GET /names` from the contributions in the window: the servers of calls and the tools of `server`'s calls (every
 * server's without it), and the agents whose calls, escalations or reports count, each by its name or else its id.
 */
function expectedNames(contributions: Contributions, server: string | null, limit: number) {
  const counted = (measures: Record<string, number | bigint>, names: readonly string[]) =>
    names.some((m) => Number(measures[m] ?? 0) > 0);
  const calls = contributions.calls.filter((c) => c.tool !== null && counted(c.measures, ['calls']));
  const ofServer = (s: string | null) =>
    server === null || s === server || (server === UNKNOWN_SERVER && s === null);
  const agents = [
    ...contributions.calls.filter((c) => counted(c.measures, ['calls', 'escalations'])),
    ...contributions.reports.filter((r) => counted(r.measures, ['reports'])),
  ].map((c) => c.agentName ?? c.agentId);
  const listed = <T extends string | null>(names: readonly T[]) => {
    const distinct = [...new Set(names)].sort(compareText);
    return { names: distinct.slice(0, limit), count: distinct.length };
  };
  const servers = listed(calls.map((c) => c.server));
  const tools = listed(calls.filter((c) => ofServer(c.server)).map((c) => c.tool!));
  const named = listed(agents.filter((agent): agent is string => agent !== null));
  return {
    limit,
    search: null,
    servers: servers.names,
    serverCount: servers.count,
    tools: tools.names,
    toolCount: tools.count,
    agents: named.names,
    agentCount: named.count,
  };
}

async function actualReports(filter: Filter) {
  const q = query(filter);
  const paths = Object.keys(expectedReports({ calls: [], findings: [], reports: [] }));
  return Object.fromEntries(
    await Promise.all(
      paths.map(async (path) => [path, await api(`${path}${path.includes('?') ? '&' : '?'}${q}`)] as const),
    ),
  );
}

describe('reports from rollups', () => {
  it('hold the whole corpus: every tool call counted once', async () => {
    const toolCalls = [...SPANS, ...OTHER_AGENTS].filter((span) => span.name.startsWith('tools/call')).length;
    const report = (await api('reports/retry-waste')) as { totals: { calls: number } };
    expect(report.totals.calls).toBe(toolCalls);
  });

  it('over any window, agent and server, equal the reports (and the names) of the contributions that started in it', async () => {
    const instant = fc.integer({ min: START - 2 * HOUR, max: END + 2 * HOUR }).map((ms) => new Date(ms));
    await fc.assert(
      fc.asyncProperty(
        fc.option(instant, { nil: null }),
        fc.option(instant, { nil: null }),
        fc.constantFrom(null, 'support', 'research'),
        fc.constantFrom(null, 'server-0', 'server-1'),
        // The names' lists cut short, or whole.
        fc.constantFrom(2, 1_000),
        async (a, b, agent, byServer, limit) => {
          const [from, to] = a !== null && b !== null && b < a ? [b, a] : [a, b];
          if (from !== null && to !== null && from.getTime() === to.getTime()) return;
          const filter = { from, to, agent, server: byServer };
          // The names ignore the agent filter; the server filter selects whose tools are listed.
          const window = { from, to, agent: null, server: null };
          expect(await api(`names?${query({ ...window, server: byServer })}&limit=${limit}`)).toEqual(
            expectedNames(await contributionsIn(window), byServer, limit),
          );
          expect(JSON.parse(JSON.stringify(await actualReports(filter)))).toEqual(
            JSON.parse(
              JSON.stringify(expectedReports(await contributionsIn(filter)), (_key, value: unknown) =>
                typeof value === 'bigint' ? Number(value) : value,
              ),
            ),
          );
        },
      ),
      { numRuns: 60, seed: 20261130 },
    );
  }, 120_000);

  it('a window reaching before 1970 or past 2262 (beyond nanoseconds in a bigint) holds everything: as no window', async () => {
    const everything = await actualReports({ from: null, to: null, agent: null, server: null });
    const wide = await actualReports({
      from: new Date('1600-01-01T00:00:00Z'),
      to: new Date('2300-01-01T00:00:00Z'),
      agent: null,
      server: null,
    });
    expect(wide).toEqual(everything);
  });

  it('as a time series over any window and step, each point equals the reports over its own bucket', async () => {
    const instant = fc.integer({ min: START - 2 * HOUR, max: END + 2 * HOUR }).map((ms) => new Date(ms));
    let cut = 0;
    await fc.assert(
      fc.asyncProperty(
        instant,
        fc.integer({ min: 1, max: 80 * HOUR }),
        fc.constantFrom('hour', 'day'),
        fc.constantFrom(null, 'support', 'research'),
        fc.constantFrom(null, 'server-0', 'server-1'),
        fc.constantFrom('category' as const, 'server' as const, 'tool' as const),
        // Cut below the groups there are as well: the read ranks and cuts them, the expectation in memory.
        fc.constantFrom(1, 2, DEFAULT_SERIES_GROUPS),
        async (from, lengthMs, step, agent, byServer, groupBy, groupLimit) => {
          const to = new Date(from.getTime() + lengthMs);
          const filter = { from, to, agent, server: byServer };
          const series = (await api(
            `reports/timeseries?${query(filter)}&step=${step}&groupBy=${groupBy}&groupLimit=${groupLimit}`,
          )) as {
            keptGroups: string[];
            foldedGroups: number;
            points: { from: string; to: string }[];
          };
          const inWindow = await contributionsIn(filter);
          const expected = series.points.map((point) => {
            const [start, end] = [Date.parse(point.from), Date.parse(point.to)];
            const inBucket = <T extends { startNs: bigint }>(rows: readonly T[]) =>
              rows.filter((row) => {
                const ms = Number(row.startNs / 1_000_000n);
                return ms >= start && ms < end;
              });
            const sums = sumContributions({
              calls: inBucket(inWindow.calls),
              findings: [],
              reports: inBucket(inWindow.reports),
            });
            const window = { from: new Date(start), to: new Date(end) };
            return seriesPointFromSums(window, sums.calls, sums.reports, groupBy);
          });
          const bounded = boundSeriesGroups(expected, groupLimit);
          if (bounded.foldedGroups > 0) cut++;
          expect(series).toMatchObject({
            keptGroups: bounded.keptGroups,
            foldedGroups: bounded.foldedGroups,
          });
          expect(series.points).toEqual(JSON.parse(JSON.stringify(bounded.points)));
          expect(series.points[0]!.from).toBe(from.toISOString());
          expect(series.points.at(-1)!.to).toBe(to.toISOString());
        },
      ),
      { numRuns: 25, seed: 20261201 },
    );
    expect(cut).toBeGreaterThan(0);
  }, 120_000);

  it('npm run projections:rebuild gives the same contributions and rollups', async () => {
    // Rows a trace's contributions moved away from stay at zero in the incremental rollups: compare the rest.
    const snapshot = async () => {
      const out: Record<string, string[]> = {};
      for (const table of ['contribution', 'call_rollup', 'finding_rollup', 'report_rollup']) {
        const { rows } = await sql<{ row: Record<string, unknown> }>`
          SELECT to_jsonb(r) AS row FROM ${sql.table(table)} AS r`.execute(server.db);
        out[table] = rows
          .map(({ row }) => row)
          .filter((row) => table === 'contribution' || MEASURES.some((m) => Number(row[m] ?? 0) !== 0))
          .map((row) => JSON.stringify(row))
          .sort();
      }
      return out;
    };
    const before = await snapshot();
    await server.app.get(ProjectorService).rebuild();
    expect(await snapshot()).toEqual(before);
  }, 60_000);
});

describe('the server filter', () => {
  it('(unknown) selects the calls whose server did not say its name, the group the reports label so', async () => {
    // Given, on a day of their own, two failed calls to a server that never said its name, each retried once,
    // and one call to a named server
    const at = Date.UTC(2026, 11, 5, 10);
    const nameless = { 'errata.server.name': undefined };
    const spans = new AgentTrace().run('nameless-agent', at, [
      { tool: 'lookup', startMs: at + 1, durationMs: 5, isError: true, text: 'Timed out', extra: nameless },
      { tool: 'lookup', startMs: at + 10, durationMs: 5, isError: true, text: 'Timed out', extra: nameless },
      { tool: 'search', startMs: at + 20, durationMs: 5, isError: true, text: 'Timed out', extra: nameless },
      { tool: 'search', startMs: at + 30, durationMs: 5, isError: true, text: 'Timed out', extra: nameless },
      { tool: 'lookup', server: 'named-server', startMs: at + 40, durationMs: 5 },
    ]);
    // and a subagent's hand-back: an escalation no failure explains, a report that leaves out its alternatives
    const handBack = new AgentTrace().subagentHandBack('helper', at + 50, {
      'errata.subagent.alternatives': undefined,
    });
    await deliver([...spans, ...handBack]);
    await server.catchUp();
    const day = `from=${new Date(at).toISOString()}&to=${new Date(at + 24 * HOUR).toISOString()}`;

    // Then the report grouped by server labels their retries (unknown)
    const byServer = (await api(`reports/retry-waste?groupBy=server&${day}`)) as {
      groups: { key: string; retries: number }[];
    };
    expect(byServer.groups).toEqual([expect.objectContaining({ key: '(unknown)', retries: 2 })]);

    // And that label, as the server filter, selects exactly their calls: the group can be opened
    const unknown = (await api(`reports/retry-waste?server=(unknown)&${day}`)) as {
      totals: { calls: number; retries: number };
    };
    expect(unknown.totals).toMatchObject({ calls: 4, retries: 2 });
    const scorecard = (await api(`servers?server=(unknown)&${day}`)) as {
      servers: { server: string | null }[];
    };
    expect(scorecard.servers.map((s) => s.server)).toEqual([null]);
    // But not the escalation or the report's missing context: neither is a call of that server
    const escalations = (await api(`reports/escalations?server=(unknown)&${day}`)) as {
      totals: { failures: number; escalations: number };
    };
    expect(escalations.totals).toMatchObject({ failures: 4, escalations: 0 });
    const everyEscalation = (await api(`reports/escalations?${day}`)) as { totals: { escalations: number } };
    expect(everyEscalation.totals.escalations).toBe(1);
    const findings = (await api(`findings?server=(unknown)&${day}`)) as { findings: { rule: string }[] };
    const everyFinding = (await api(`findings?${day}`)) as { findings: { rule: string }[] };
    expect(everyFinding.findings.map((f) => f.rule)).toContain('missing-propagation-context');
    expect(findings.findings.map((f) => f.rule)).not.toContain('missing-propagation-context');
    expect(findings.findings.length).toBeGreaterThan(0);
    const named = (await api(`reports/retry-waste?server=named-server&${day}`)) as {
      totals: { calls: number };
    };
    expect(named.totals.calls).toBe(1);
  });
});
