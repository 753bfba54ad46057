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
  ['AgentRunObserved', null, null, null, 26],
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

  it('uses the running Errata, plays every episode and ends with the lines that show the reports', () => {
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Using the Errata running at ${server.url}.`);
    expect(run.stdout).toContain(`Episode ${EPISODES}/${EPISODES}`);
    expect(run.stdout).toMatch(/Spans sent to Errata: \d+ exported, 0 dropped, 0 failed/);
    for (const query of [
      'groupBy=category',
      'groupBy=server',
      'groupBy=tool',
      'groupBy=category&agent=naive',
    ]) {
      expect(run.stdout).toContain(
        `curl -s -H "Authorization: Bearer ${server.readKey}" "${server.url}/api/v1/reports/retry-waste?${query}"`,
      );
    }
    expect(run.stdout).toContain(`curl -s ${server.url}/healthz`);
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
      calls: 59 * EPISODES,
      retries: 30 * EPISODES,
      wastedRetries: 30 * EPISODES,
      unrecoveredChains: 11 * EPISODES,
    });
    expect(contractAware.totals).toMatchObject({
      calls: 40 * EPISODES,
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
});
