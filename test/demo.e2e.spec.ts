import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/server';

/** The built demo (`npm run build`), run as users run it, against a real Errata with its own database. */
const DEMO = join(__dirname, '../apps/demo-agent/dist/main.js');
const EPISODES = 2;

interface DemoRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function runDemo(env: Record<string, string>): Promise<DemoRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [DEMO],
      { env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1,
          stdout,
          stderr,
        }),
    );
  });
}

type EventCount = [
  type: string,
  server: string | null,
  tool: string | null,
  outcome: string | null,
  n: number,
];

/** What one episode stores: both policies, every scenario. */
const EVENTS_PER_EPISODE: EventCount[] = [
  ['AgentRunObserved', null, null, null, 28],
  ['EscalationObserved', null, null, null, 22],
  ['SubagentReportObserved', null, null, null, 6],
  ['ToolCallObserved', 'mcp-servers/everything', 'echo', 'ok', 2],
  ['ToolCallObserved', 'mcp-servers/everything', 'get-sum', 'ok', 2],
  ['ToolCallObserved', 'mcp-servers/everything', 'get-sum', 'tool_error', 5],
  ['ToolCallObserved', 'memory-server', 'create_entities', 'ok', 2],
  ['ToolCallObserved', 'memory-server', 'search_nodes', 'ok', 2],
  ['ToolCallObserved', 'memory-server', 'search_nodes', 'ok_empty', 4],
  ['ToolCallObserved', 'secure-filesystem-server', 'get_file_info', 'tool_error', 5],
  ['ToolCallObserved', 'secure-filesystem-server', 'list_directory', 'ok', 2],
  ['ToolCallObserved', 'secure-filesystem-server', 'read_text_file', 'ok', 4],
  ['ToolCallObserved', 'secure-filesystem-server', 'read_text_file', 'tool_error', 5],
  ['ToolCallObserved', 'support-desk', 'create_shipping_label', 'tool_error', 5],
  ['ToolCallObserved', 'support-desk', 'get_account_notes', 'ok', 2],
  ['ToolCallObserved', 'support-desk', 'get_customer_records', 'tool_error', 4],
  ['ToolCallObserved', 'support-desk', 'lookup_order', 'ok', 3],
  ['ToolCallObserved', 'support-desk', 'lookup_order', 'ok_empty', 4],
  ['ToolCallObserved', 'support-desk', 'lookup_order', 'tool_error', 6],
  ['ToolCallObserved', 'support-desk', 'process_refund', 'ok', 2],
  ['ToolCallObserved', 'support-desk', 'process_refund', 'tool_error', 8],
  ['ToolCallObserved', 'support-desk', 'search_knowledge_base', 'ok', 4],
  ['ToolCallObserved', 'support-desk', 'search_news', 'ok_empty', 4],
  ['ToolCallObserved', 'support-desk', 'search_tickets', 'ok', 2],
  ['ToolCallObserved', 'support-desk', 'search_tickets', 'tool_error', 4],
  ['ToolCallObserved', 'support-desk', 'search_web', 'ok', 6],
  ['ToolCallObserved', 'support-desk', 'search_web', 'tool_error', 14],
];

const eventKey = ([type, server, tool, outcome]: EventCount): string =>
  [type, server, tool, outcome].join(' | ');

/** The retry-waste report of one episode, by category of the retried call (DOMAIN.md §2). */
const RETRY_WASTE_PER_EPISODE: Record<
  string,
  { retries: number; wasted: number; unrecovered: number; reasons: Record<string, number> }
> = {
  business: { retries: 4, wasted: 4, unrecovered: 2, reasons: { non_retryable: 4 } },
  empty: { retries: 8, wasted: 8, unrecovered: 1, reasons: { misclassified_empty: 2, repeated_empty: 6 } },
  permission: { retries: 5, wasted: 5, unrecovered: 3, reasons: { non_retryable: 5 } },
  transient: { retries: 12, wasted: 6, unrecovered: 4, reasons: { recovery: 6, ignored_retry_after: 6 } },
  unknown: { retries: 6, wasted: 6, unrecovered: 4, reasons: { guess: 6 } },
  validation: { retries: 6, wasted: 5, unrecovered: 3, reasons: { blind_retry: 5, corrected: 1 } },
};

interface RetryWaste {
  totals: { calls: number; retries: number; wastedRetries: number; unrecoveredChains: number };
  groups: {
    key: string;
    retries: number;
    wastedRetries: number;
    unrecoveredChains: number;
    reasons: Record<string, number>;
  }[];
}

describe('npm run demo', () => {
  let server: TestServer;
  let run: DemoRun;

  beforeAll(async () => {
    server = await startTestServer('postgres');
    run = await runDemo({
      ERRATA_URL: server.url,
      ERRATA_INGEST_KEY: server.ingestKey,
      ERRATA_READ_KEY: server.readKey,
      DEMO_EPISODES: String(EPISODES),
    });
    await server.catchUp();
  }, 90_000);
  afterAll(() => server?.close());

  async function retryWaste(query: string): Promise<RetryWaste> {
    const response = await fetch(`${server.url}/api/v1/reports/retry-waste?${query}`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as RetryWaste;
  }

  it('uses the running Errata, plays every episode and ends with the lines that show the reports', async () => {
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Using the Errata running at ${server.url}.`);
    expect(run.stdout).toContain(`Episode ${EPISODES}/${EPISODES}`);
    expect(run.stdout).toMatch(/Spans sent to Errata: \d+ exported, 0 dropped, 0 failed/);
    const curls = [
      'reports/retry-waste?groupBy=category',
      'reports/retry-waste?groupBy=server',
      'reports/retry-waste?groupBy=tool',
      'reports/retry-waste?groupBy=category&agent=naive',
      'reports/retry-waste?groupBy=category&agent=contract-aware',
      'reports/escalations',
      'reports/escalations?agent=naive',
      'reports/misclassified-results',
      'reports/subagent-coverage',
      'findings',
      'servers',
    ];
    for (const path of curls) {
      expect(run.stdout).toContain(
        `curl -s -H "Authorization: Bearer ${server.readKey}" "${server.url}/api/v1/${path}"`,
      );
    }
    expect(run.stdout).toContain(`curl -s ${server.url}/healthz`);
    for (const page of ['/', '/docs', '/mcp']) expect(run.stdout).toContain(`${server.url}${page} `);
    // Dashboard links to this run, policy by policy, and to a research run: pages the dashboard serves.
    const links = [
      ...run.stdout.matchAll(
        /^ {15}(http\S+) {3}\((this run|the \S+ policy|one research run as a timeline)\)$/gm,
      ),
    ];
    expect(links.map((link) => link[2])).toEqual([
      'this run',
      'the naive policy',
      'the contract-aware policy',
      'one research run as a timeline',
    ]);
    expect(links[1]![1]).toMatch(/\/retry-waste\?from=[^&]+&agent=naive$/);
    for (const [, url] of links) {
      const page = await fetch(url!, { headers: { accept: 'text/html' } });
      expect(page.status, url).toBe(200);
    }
  });

  it("prints Errata's four reports, the findings and the server grades for the run, with the scenario's figures", () => {
    const start = run.stdout.indexOf("Errata's reports on this run:");
    expect(start).toBeGreaterThan(-1);
    // Wasted milliseconds depend on the machine, and the retry-waste groups are ordered by them.
    const section = run.stdout
      .slice(start)
      .split('\n\n')[0]!
      .split('\n')
      .map((line) => line.replace(/\(\d+ ms\)/, '(… ms)'));
    const n = (perEpisode: number) => perEpisode * EPISODES;
    const expected = [
      "Errata's reports on this run:",
      '  Retry waste',
      `    all agents             ${n(101)} calls, ${n(41)} retries, ${n(34)} wasted (… ms), ${n(17)} unrecovered chains`,
      `    agent=naive            ${n(60)} calls, ${n(30)} retries, ${n(30)} wasted (… ms), ${n(11)} unrecovered chains`,
      `    agent=contract-aware   ${n(41)} calls, ${n(11)} retries, ${n(4)} wasted (… ms), ${n(6)} unrecovered chains`,
      '    by category of the retried call:',
      ...Object.entries(RETRY_WASTE_PER_EPISODE).map(
        ([category, group]) =>
          `      ${category.padEnd(11)} ${n(group.retries)} retries, ${n(group.wasted)} wasted — ` +
          Object.entries(group.reasons)
            .map(([reason, count]) => `${reason} ${n(count)}`)
            .join(', '),
      ),
      '  Escalations',
      `    all agents             ${n(22)} hand-offs after ${n(56)} failed calls (rate 39%): ${n(20)} attributed, ${n(7)} avoidable`,
      `    agent=naive            ${n(15)} hand-offs after ${n(35)} failed calls (rate 43%): ${n(13)} attributed, ${n(4)} avoidable`,
      `    agent=contract-aware   ${n(7)} hand-offs after ${n(21)} failed calls (rate 33%): ${n(7)} attributed, ${n(3)} avoidable`,
      `    to: human ${n(14)}, user ${n(5)}, coordinator ${n(3)}`,
      '    by category of the failed call: ' +
        [
          `transient ${n(3)} of ${n(16)} (19%)`,
          `validation ${n(3)} of ${n(9)} (33%, ${n(3)} avoidable)`,
          `business ${n(4)} of ${n(8)} (50%, ${n(4)} avoidable)`,
          `permission ${n(4)} of ${n(9)} (44%)`,
          `unknown ${n(5)} of ${n(10)} (50%)`,
          `empty ${n(1)} of ${n(4)} (25%)`,
        ].join(', '),
      '  Misclassified results',
      `    ${n(4)} empty-as-error and ${n(2)} failure-as-empty results in ${n(101)} calls`,
      `    support-desk search_tickets, of ${n(6)} calls: ${n(4)} empty-as-error, 0 failure-as-empty; they triggered ${n(2)} retries, ${n(1)} hand-offs`,
      `    support-desk get_account_notes, of ${n(2)} calls: 0 empty-as-error, ${n(2)} failure-as-empty; they triggered 0 retries, 0 hand-offs`,
      '  Subagent coverage',
      `    ${n(6)} reports (complete ${n(4)}, partial ${n(2)}, failed 0), mean coverage 92%`,
      `    propagation completeness 100% (most often missing: nothing), local absorption 14% (${n(2)} of ${n(14)} transient failures), ${n(2)} silent partials`,
      '  Findings: 8 (untyped-error 4, leaky-error 2, empty-as-error 1, failure-as-empty 1)',
      ...[
        ['mcp-servers/everything get-sum', 'untyped-error', 5, '71%', 3],
        ['secure-filesystem-server get_file_info', 'untyped-error', 5, '100%', 3],
        ['secure-filesystem-server read_text_file', 'untyped-error', 5, '56%', 3],
        ['support-desk create_shipping_label', 'untyped-error', 5, '100%', 3],
        ['secure-filesystem-server get_file_info', 'leaky-error', 5, '100%', 3],
        ['secure-filesystem-server read_text_file', 'leaky-error', 5, '56%', 3],
        ['support-desk search_tickets', 'empty-as-error', 4, '67%', 2],
        ['support-desk get_account_notes', 'failure-as-empty', 2, '100%', 0],
      ].map(
        ([tool, rule, calls, rate, wasted]) =>
          `    ${String(tool).padEnd(40)} ${String(rule).padEnd(20)} ${n(Number(calls))} calls (${rate}), ${n(Number(wasted))} wasted retries`,
      ),
      '  Server grades: mcp-servers/everything F, memory-server A, secure-filesystem-server F, support-desk D',
    ];
    expect([...section].sort()).toEqual([...expected].sort());
    expect(section.slice(0, 3)).toEqual(expected.slice(0, 3));
  });

  it('stores tool calls of all four MCP servers, agent runs, escalations and subagent reports', async () => {
    const { rows } = await sql<{
      type: string;
      server: string | null;
      tool: string | null;
      outcome: string | null;
      n: number;
    }>`
      SELECT type, server_name AS server, tool_name AS tool, outcome, count(*)::int AS n
      FROM event GROUP BY 1, 2, 3, 4`.execute(server.db);
    const stored = Object.fromEntries(
      rows.map((row): [string, number] => [
        eventKey([row.type, row.server, row.tool, row.outcome, row.n]),
        row.n,
      ]),
    );
    const expected = Object.fromEntries(
      EVENTS_PER_EPISODE.map((count) => [eventKey(count), count[4] * EPISODES]),
    );
    expect(stored).toEqual(expected);
  });

  it("reports every tool call in the retry-waste report, with the scenario's exact figures", async () => {
    const calls = EVENTS_PER_EPISODE.filter(([type]) => type === 'ToolCallObserved').reduce(
      (total, count) => total + count[4] * EPISODES,
      0,
    );
    const report = await retryWaste('groupBy=category');
    expect(report.totals).toMatchObject({
      calls,
      retries: 41 * EPISODES,
      wastedRetries: 34 * EPISODES,
      unrecoveredChains: 17 * EPISODES,
    });
    const groups = Object.fromEntries(
      report.groups.map((group) => [
        group.key,
        {
          retries: group.retries,
          wasted: group.wastedRetries,
          unrecovered: group.unrecoveredChains,
          reasons: Object.fromEntries(Object.entries(group.reasons).filter(([, n]) => n > 0)),
        },
      ]),
    );
    const times = (record: Record<string, number>) =>
      Object.fromEntries(Object.entries(record).map(([key, n]) => [key, n * EPISODES]));
    expect(groups).toEqual(
      Object.fromEntries(
        Object.entries(RETRY_WASTE_PER_EPISODE).map(([key, group]) => [
          key,
          {
            retries: group.retries * EPISODES,
            wasted: group.wasted * EPISODES,
            unrecovered: group.unrecovered * EPISODES,
            reasons: times(group.reasons),
          },
        ]),
      ),
    );
  });

  it('separates the policies by agent: the naive one wastes every retry, the contract-aware one few', async () => {
    const naive = await retryWaste('groupBy=category&agent=naive');
    const contractAware = await retryWaste('groupBy=category&agent=contract-aware');
    expect(naive.totals).toMatchObject({
      calls: 60 * EPISODES,
      retries: 30 * EPISODES,
      wastedRetries: 30 * EPISODES,
      unrecoveredChains: 11 * EPISODES,
    });
    expect(contractAware.totals).toMatchObject({
      calls: 41 * EPISODES,
      retries: 11 * EPISODES,
      wastedRetries: 4 * EPISODES,
      unrecoveredChains: 6 * EPISODES,
    });
  });

  async function report(path: string): Promise<Record<string, unknown>> {
    const response = await fetch(`${server.url}/api/v1/${path}`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  }

  it('escalations: every hand-off the policies made, by target (naive: 12 human + 3 coordinator; contract-aware: 2 human + 5 user, per episode)', async () => {
    const escalations = await report('reports/escalations');
    expect(escalations['totals']).toMatchObject({ escalations: 22 * EPISODES });
    expect(escalations['byTarget']).toEqual({
      human: 14 * EPISODES,
      user: 5 * EPISODES,
      coordinator: 3 * EPISODES,
    });
    const naive = await report('reports/escalations?agent=naive');
    expect(naive['byTarget']).toEqual({ human: 12 * EPISODES, user: 0, coordinator: 3 * EPISODES });
  });

  it('subagent coverage: per policy and episode, kb complete, web partial with all four elements, news a silent partial', async () => {
    const coverage = await report('reports/subagent-coverage');
    expect(coverage).toMatchObject({
      reports: 6 * EPISODES,
      complete: 4 * EPISODES,
      partial: 2 * EPISODES,
      failed: 0,
      propagationCompleteness: 1,
      silentPartials: 2 * EPISODES,
    });
  });

  it('misclassified results: every NO_TICKETS_FOUND error of search_tickets is empty-as-error', async () => {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM event
       WHERE type = 'ToolCallObserved' AND tool_name = 'search_tickets' AND outcome = 'tool_error'
         AND data->'result'->>'text' LIKE '%NO_TICKETS_FOUND%'`.execute(server.db);
    expect(rows[0]!.n).toBeGreaterThan(0);
    const misclassified = await report('reports/misclassified-results');
    const groups = misclassified['groups'] as { tool: string; emptyAsError: number }[];
    expect(groups.find((group) => group.tool === 'search_tickets')?.emptyAsError).toBe(rows[0]!.n);
  });

  it('misclassified results: get_account_notes\' "ERROR: Permission denied" with isError false is failure-as-empty', async () => {
    const misclassified = await report('reports/misclassified-results');
    const groups = misclassified['groups'] as {
      tool: string;
      calls: number;
      failureAsEmpty: number;
      samples?: unknown;
    }[];
    expect(groups.find((group) => group.tool === 'get_account_notes')).toMatchObject({
      calls: 2 * EPISODES,
      failureAsEmpty: 2 * EPISODES,
    });
    expect(JSON.stringify(groups.find((group) => group.tool === 'get_account_notes'))).toContain(
      'ERROR: Permission denied',
    );
  });
});
