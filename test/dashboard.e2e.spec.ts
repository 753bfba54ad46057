/**
 * The dashboard in a real browser: Debian's chromium driven by playwright-core against a real Errata (PostgreSQL)
 * seeded by the demo agent (`npm run demo`: real MCP servers, @errata/sdk, OTLP ingest). Every page renders, its
 * figures equal the REST API's for the same window and filters, filters change the URL and the data, and a run
 * timeline opens from a misclassified sample. Screenshots go to artifacts/dashboard/. (axe-core, and the keyboard
 * from sign-in to a call on its timeline: dashboard-accessibility.e2e.spec.ts.)
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDuration } from '../apps/dashboard/src/format';
import { ProjectRepository } from '../apps/server/src/repositories/project.repository';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { FixService } from '../apps/server/src/services/fix.service';
import { AgentTrace } from './support/agent-spans';
import { artifactDir, contrastRatio, launchChromium, requestsOf, type PageRequests } from './support/browser';
import { seedWithDemo } from './support/demo-seed';
import { chooseName, offeredNames, type NameFilterName } from './support/name-filter';
import { sendSpans, startTestServer, type TestServer } from './support/server';

const SCREENSHOTS = artifactDir('dashboard');

interface Window {
  readonly from: string;
  readonly to: string;
}

describe('dashboard (chromium)', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let requests: PageRequests;
  /** Console errors while the first page loaded and signed in (a failed request shows here too). */
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    server = await startTestServer('postgres', {
      ERRATA_WEBHOOK_ALLOW_INTERNAL: 'true', // the owner's receiver below listens on loopback
      ERRATA_FIX_INTERVAL_MS: '3600000', // fix rounds are run by the test
      ERRATA_DELIVERY_POLL_MS: '25',
    });
    await seedWithDemo(server);
    await server.catchUp();
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  beforeAll(async () => {
    context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
    requests = requestsOf(page);
    const recordError = (message: ConsoleMessage) => {
      if (message.type() === 'error') consoleErrors.push(`${message.text()} ${message.location().url}`);
    };
    page.on('console', recordError);
    await page.goto(`${server.url}/`);
    await page.getByLabel('Read key').fill(server.readKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page.waitForLoadState('networkidle');
    page.off('console', recordError);
  });

  it('loads and signs in without a console error (no /favicon.ico request: the icon is inline)', () => {
    expect(consoleErrors).toEqual([]);
  });

  async function api<T>(path: string, params: Record<string, string | null> = {}): Promise<T> {
    const search = new URLSearchParams(
      Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== null),
    );
    const response = await fetch(`${server.url}/api/v1/${path}?${search}`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(response.status, `${path} ${await response.clone().text()}`).toBe(200);
    return (await response.json()) as T;
  }

  /** The window the page asked the API about, as it shows it. */
  async function shownWindow(): Promise<Window> {
    const window = page.locator('.window');
    return { from: (await window.getAttribute('data-from'))!, to: (await window.getAttribute('data-to'))! };
  }

  async function visit(path: string, heading: string | RegExp): Promise<void> {
    await page.goto(`${server.url}${path}`);
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
    await page.locator('.state-loading').first().waitFor({ state: 'detached' });
  }

  const statValue = async (id: string): Promise<string> =>
    (await page.locator(`[data-stat="${id}"] dd`).getAttribute('data-value'))!;

  const screenshot = (name: string) =>
    page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });

  /** Each row's labelled counts (`CountList`): row key → item key → value. */
  async function rowCounts(rows: string): Promise<Record<string, Record<string, number>>> {
    return page
      .locator(rows)
      .evaluateAll((found) =>
        Object.fromEntries(
          found.map((row) => [
            row.getAttribute('data-key') ?? '',
            Object.fromEntries(
              Array.from(row.querySelectorAll('li[data-key]')).map((item) => [
                item.getAttribute('data-key') ?? '',
                Number(item.getAttribute('data-value')),
              ]),
            ),
          ]),
        ),
      );
  }
  const nonZero = (counts: Record<string, number | undefined>) =>
    Object.fromEntries(Object.entries(counts).filter(([, n]) => (n ?? 0) > 0));

  /** Each row's key and its numeric cells' raw values, as the page shows them. */
  async function tableRows(name: string): Promise<Record<string, string[]>> {
    return page
      .locator(`[data-table="${name}"] tbody tr`)
      .evaluateAll((rows) =>
        Object.fromEntries(
          rows.map((row) => [
            row.getAttribute('data-key') ?? '',
            Array.from(row.querySelectorAll('td[data-value]')).map(
              (cell) => cell.getAttribute('data-value') ?? '',
            ),
          ]),
        ),
      );
  }

  async function chartSeries(name: string): Promise<Record<string, (number | null)[]>> {
    const figure = page.locator(`[data-chart="${name}"]`);
    await figure.locator('canvas').first().waitFor(); // drawn after the data arrives, which can take a moment
    return JSON.parse((await figure.getAttribute('data-series'))!) as Record<string, (number | null)[]>;
  }

  const sum = (values: readonly (number | null)[]) => values.reduce<number>((a, b) => a + (b ?? 0), 0);

  it('keeps the read key in session storage, never in the URL, and asks again for a wrong one', async () => {
    expect(page.url()).not.toContain(server.readKey);
    expect(await page.evaluate(() => sessionStorage.getItem('errata.readKey'))).toBe(server.readKey);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);

    const stranger = await browser.newPage();
    stranger.setDefaultTimeout(10_000);
    await stranger.goto(`${server.url}/retry-waste`);
    await stranger.getByLabel('Read key').fill('not-a-key');
    await stranger.getByRole('button', { name: 'Sign in' }).click();
    await stranger.getByRole('alert').filter({ hasText: 'does not know this key' }).waitFor();
    await stranger.getByLabel('Read key').fill(server.ingestKey);
    await stranger.getByRole('button', { name: 'Sign in' }).click();
    await stranger.getByRole('alert').filter({ hasText: 'read scope' }).waitFor();
    await stranger.screenshot({ path: join(SCREENSHOTS, 'sign-in.png') });
    await stranger.close();
  });

  it('overview: every headline figure equals the REST reports, each with its time series', async () => {
    await visit('/', 'Overview');
    const window = await shownWindow();
    const [retryWaste, escalations, coverage, series] = await Promise.all([
      api<{ totals: Record<string, number> }>('reports/retry-waste', { ...window }),
      api<{ totals: Record<string, number> }>('reports/escalations', { ...window }),
      api<{ meanCoverage: number | null; reports: number }>('reports/subagent-coverage', { ...window }),
      api<{ points: { calls: number; wastedRetries: number; wastedMs: number }[] }>('reports/timeseries', {
        ...window,
      }),
    ]);
    expect(retryWaste.totals['calls']).toBeGreaterThan(0);
    expect(await statValue('calls')).toBe(String(retryWaste.totals['calls']));
    expect(Number(await statValue('failure-rate'))).toBeCloseTo(
      escalations.totals['failures']! / retryWaste.totals['calls']!,
      12,
    );
    expect(await statValue('wasted-retries')).toBe(String(retryWaste.totals['wastedRetries']));
    expect(await statValue('wasted-ms')).toBe(String(retryWaste.totals['wastedMs']));
    expect(await statValue('avoidable-escalations')).toBe(String(escalations.totals['avoidable']));
    expect(Number(await statValue('subagent-coverage'))).toBeCloseTo(coverage.meanCoverage!, 12);
    expect(await page.locator('[data-stat="calls"] dd').textContent()).toBe(
      retryWaste.totals['calls']!.toLocaleString('en-US'),
    );

    // The series add up to the window's totals: the buckets tile the window.
    expect(sum((await chartSeries('calls'))['calls']!)).toBe(retryWaste.totals['calls']);
    expect(sum((await chartSeries('wasted-retries'))['wasted retries']!)).toBe(
      retryWaste.totals['wastedRetries'],
    );
    expect(sum(series.points.map((p) => p.wastedMs))).toBe(retryWaste.totals['wastedMs']);
    for (const chart of ['failure-rate', 'wasted-ms', 'avoidable-escalations', 'subagent-coverage']) {
      expect(Object.keys(await chartSeries(chart)).length).toBeGreaterThan(0);
    }
    // The charts' figures tables are drawn when opened: a 1,000-day window drew 6,000 rows no one had opened.
    expect(await page.locator('.chart-figures tr').count()).toBe(0);
    // The time wasted per bucket reads as a duration, as its figure above does, not as a count of milliseconds
    // (over a month at 300,000 calls its axis read "3,000,000" with no unit).
    const wastedMs = page.locator('figure[data-chart="wasted-ms"]');
    await wastedMs.locator('summary').click();
    const cells = await wastedMs
      .locator('.chart-figures tbody td')
      .evaluateAll((tds) => tds.map((td) => [td.getAttribute('data-value'), td.textContent] as const));
    expect(cells.length).toBe(series.points.length);
    for (const [value, text] of cells) expect(text).toBe(value === '' ? '—' : formatDuration(Number(value)));
    await wastedMs.locator('summary').click();
    await screenshot('overview');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot('overview-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('retry waste: groups and reasons equal the report, groupBy and filters go into the URL and change the data', async () => {
    await visit('/retry-waste', 'Retry waste');
    let window = await shownWindow();
    const byCategory = await api<{
      groups: {
        key: string;
        retries: number;
        wastedRetries: number;
        wastedMs: number;
        unrecoveredChains: number;
        reasons: Record<string, number>;
        samples: { traceId: string; spanId: string }[];
      }[];
    }>('reports/retry-waste', { ...window, groupBy: 'category' });
    const expectedRows = (groups: typeof byCategory.groups) =>
      Object.fromEntries(
        groups.map((g) => [g.key, [g.retries, g.wastedRetries, g.wastedMs, g.unrecoveredChains].map(String)]),
      );
    expect(await tableRows('retry-groups')).toEqual(expectedRows(byCategory.groups));
    expect(await rowCounts('[data-table="retry-groups"] tbody tr')).toEqual(
      Object.fromEntries(byCategory.groups.map((g) => [g.key, nonZero(g.reasons)])),
    );
    expect(byCategory.groups.some((g) => Object.keys(nonZero(g.reasons)).length > 0)).toBe(true);
    const stackedSumsEqual = async (groups: typeof byCategory.groups) => {
      const stacked = await chartSeries('wasted-by-group');
      const retried = groups.filter((g) => g.retries > 0);
      expect(Object.keys(stacked).sort()).toEqual(retried.map((g) => g.key).sort());
      for (const group of retried) expect(sum(stacked[group.key]!)).toBe(group.wastedRetries);
    };
    await stackedSumsEqual(byCategory.groups);
    // Each group lists its latest wasted retries, as the report gives them, each opening its run timeline on it.
    const shownSamples = await page
      .locator('[data-table="retry-groups"] tbody tr')
      .evaluateAll((rows) =>
        Object.fromEntries(
          rows.map((row) => [
            row.getAttribute('data-key') ?? '',
            Array.from(row.querySelectorAll('[data-sample]')).map((a) => a.getAttribute('data-sample')),
          ]),
        ),
      );
    expect(shownSamples).toEqual(
      Object.fromEntries(byCategory.groups.map((g) => [g.key, g.samples.map((x) => x.spanId)])),
    );
    await screenshot('retry-waste');
    const wasted = byCategory.groups.find((g) => g.samples.length > 0)!.samples[0]!;
    await page.locator(`[data-sample="${wasted.spanId}"]`).click();
    await page.waitForURL(new RegExp(`/traces/${wasted.traceId}\\?`));
    await page.getByRole('heading', { name: /^Run timeline/, level: 1 }).waitFor();
    expect(await page.locator('.timeline [aria-current="true"]').getAttribute('data-span')).toBe(
      wasted.spanId,
    );
    await page.goBack();
    await page.getByRole('heading', { name: 'By category' }).waitFor();

    await page
      .getByRole('group', { name: 'Group retries by' })
      .getByRole('button', { name: 'server' })
      .click();
    await page.waitForURL(/groupBy=server/);
    await page.getByRole('heading', { name: 'By server' }).waitFor();
    window = await shownWindow();
    const byServer = await api<{ groups: typeof byCategory.groups }>('reports/retry-waste', {
      ...window,
      groupBy: 'server',
    });
    expect(await tableRows('retry-groups')).toEqual(expectedRows(byServer.groups));
    await stackedSumsEqual(byServer.groups);

    const allServersCalls = Number(await statValue('calls'));
    await chooseName(page, 'server', 'support-desk');
    await page.waitForURL(/server=support-desk/);
    await page.locator('[data-table="retry-groups"]').waitFor();
    window = await shownWindow();
    const filtered = await api<{ totals: Record<string, number>; groups: typeof byCategory.groups }>(
      'reports/retry-waste',
      { ...window, groupBy: 'server', server: 'support-desk' },
    );
    expect(await statValue('calls')).toBe(String(filtered.totals['calls']));
    expect(filtered.totals['calls']).toBeLessThan(allServersCalls);
    expect(Object.keys(await tableRows('retry-groups'))).toEqual(['support-desk']);

    // The URL alone reproduces the view: a colleague opens the link, signs in (the key is per tab), and sees it.
    const shared = await context.newPage();
    await shared.goto(page.url());
    await shared.getByLabel('Read key').fill(server.readKey);
    await shared.getByRole('button', { name: 'Sign in' }).click();
    await shared.getByRole('heading', { name: 'By server' }).waitFor();
    expect(shared.url()).toBe(page.url());
    expect(await shared.getByLabel('Server', { exact: true }).inputValue()).toBe('support-desk');
    await shared.close();

    await page.getByLabel('Time range', { exact: true }).selectOption('7d');
    await page.waitForURL(/range=7d/);
    await chooseName(page, 'tool', 'lookup_order');
    await page.waitForURL(/tool=lookup_order/);
    await page.locator('[data-stat="calls"]').waitFor();
    window = await shownWindow();
    expect(Date.parse(window.to) - Date.parse(window.from)).toBe(7 * 24 * 3_600_000);
    const tool = await api<{ totals: Record<string, number> }>('reports/retry-waste', {
      ...window,
      server: 'support-desk',
      tool: 'lookup_order',
    });
    expect(await statValue('calls')).toBe(String(tool.totals['calls']));
    expect(tool.totals['calls']).toBeLessThan(filtered.totals['calls']!);
  });

  it('misclassified results: the table equals the report, and a sample opens its run timeline', async () => {
    await visit('/misclassified', 'Misclassified results');
    const window = await shownWindow();
    const report = await api<{
      totals: Record<string, number>;
      groups: {
        server: string | null;
        tool: string;
        calls: number;
        emptyAsError: number;
        failureAsEmpty: number;
        samples: { traceId: string; spanId: string; runId: string }[];
      }[];
    }>('reports/misclassified-results', { ...window });
    expect(report.groups.length).toBeGreaterThan(0);
    expect(await statValue('empty-as-error')).toBe(String(report.totals['emptyAsError']));
    expect(await statValue('failure-as-empty')).toBe(String(report.totals['failureAsEmpty']));
    expect(await tableRows('misclassified')).toEqual(
      Object.fromEntries(
        report.groups.map((g) => [
          `${g.server ?? ''}/${g.tool}`,
          [g.calls, g.emptyAsError, g.failureAsEmpty].map(String),
        ]),
      ),
    );
    await screenshot('misclassified');

    const sample = report.groups[0]!.samples[0]!;
    await page.locator(`[data-sample="${sample.spanId}"]`).click();
    await page.waitForURL(new RegExp(`/traces/${sample.traceId}\\?`));
    await page.getByRole('heading', { name: /^Run timeline/, level: 1 }).waitFor();
    const focused = page.locator('.timeline [aria-current="true"]');
    expect(await focused.getAttribute('data-span')).toBe(sample.spanId);

    const timeline = await api<{
      items: {
        spanId: string;
        runId: string;
        kind: string;
        categorySource?: string | null;
        evidence?: string | null;
        escalationsCaused?: number;
      }[];
      runs: { runId: string }[];
    }>(`traces/${sample.traceId}`);
    // The sample's call says how it was classified, with the evidence the API gives.
    const sampled = timeline.items.find((item) => item.spanId === sample.spanId)!;
    expect(sampled.evidence).not.toBeNull();
    expect(await focused.locator('[data-classification] code').textContent()).toBe(sampled.evidence);
    const shownRun = await page.locator('.timeline').getAttribute('data-run');
    expect(shownRun).toBe(sample.runId);
    const shownSpans = await page
      .locator('.timeline > li')
      .evaluateAll((items) => items.map((li) => li.getAttribute('data-span')));
    expect(shownSpans).toEqual(
      timeline.items.filter((item) => item.runId === sample.runId).map((item) => item.spanId),
    );
    await screenshot('run-timeline');
    // A count reads as words: "Led to 1 escalation", never "1 escalation(s)".
    for (const item of timeline.items.filter(
      (i) => i.runId === sample.runId && (i.escalationsCaused ?? 0) > 0,
    )) {
      const n = item.escalationsCaused!;
      expect(await page.locator(`.timeline > li[data-span="${item.spanId}"]`).textContent()).toMatch(
        new RegExp(`Led to ${n} escalation${n === 1 ? '' : 's'}(?!\\()`),
      );
    }
    expect(await page.locator('.timeline').textContent()).not.toContain('(s)');

    // Every run of the trace is listed; choosing another one shows its items.
    const links = page.getByRole('navigation', { name: 'Agent runs in this trace' }).getByRole('link');
    expect(await links.count()).toBe(timeline.runs.length);
  });

  it('escalations: totals and categories equal the report', async () => {
    await visit('/escalations', 'Escalations');
    const window = await shownWindow();
    const report = await api<{
      totals: Record<string, number>;
      byCategory: {
        category: string;
        failures: number;
        escalations: number;
        avoidable: number;
        rate: number | null;
      }[];
      byTarget: Record<string, number>;
    }>('reports/escalations', { ...window });
    for (const figure of ['failures', 'escalations', 'attributed', 'avoidable']) {
      expect(await statValue(figure)).toBe(String(report.totals[figure]));
    }
    expect(await tableRows('escalations-by-category')).toEqual(
      Object.fromEntries(
        report.byCategory
          .filter((row) => row.failures > 0 || row.escalations > 0)
          .map((row) => [
            row.category,
            [row.failures, row.escalations, row.avoidable, row.rate ?? ''].map(String),
          ]),
      ),
    );
    expect((await chartSeries('targets'))['escalations']).toEqual(Object.values(report.byTarget));
    await screenshot('escalations');
  });

  it('subagent coverage: figures, distribution and missing elements equal the report', async () => {
    await visit('/subagents', 'Subagent coverage');
    const window = await shownWindow();
    const report = await api<{
      reports: number;
      meanCoverage: number | null;
      silentPartials: number;
      coverageDistribution: Record<string, number>;
      missingElements: Record<string, number>;
    }>('reports/subagent-coverage', { ...window });
    expect(report.reports).toBeGreaterThan(0);
    expect(await statValue('reports')).toBe(String(report.reports));
    expect(await statValue('silent-partials')).toBe(String(report.silentPartials));
    expect(Number(await statValue('mean-coverage'))).toBeCloseTo(report.meanCoverage!, 12);
    const inOrder = ['0-25', '25-50', '50-75', '75-100', '100'].map(
      (bucket) => report.coverageDistribution[bucket],
    );
    expect((await chartSeries('coverage-distribution'))['reports']).toEqual(inOrder);
    expect((await chartSeries('missing-elements'))['reports missing it']).toEqual(
      Object.values(report.missingElements),
    );
    await screenshot('subagents');
  });

  it('servers: a grade per server and tool, as the scorecard gives them', async () => {
    await visit('/servers', 'Servers');
    const window = await shownWindow();
    const scorecard = await api<{
      servers: {
        server: string | null;
        grade: string;
        calls: number;
        tools: { tool: string; grade: string; calls: number; rules: Record<string, number> }[];
      }[];
    }>('servers', { ...window, toolLimit: '10' }); // the page lists 10 tools per server (TOOLS_PER_SERVER)
    for (const server of scorecard.servers) {
      const row = page.locator(`tr.server-row[data-key="${server.server ?? ''}"]`);
      expect(await row.locator('[data-grade]').getAttribute('data-grade')).toBe(server.grade);
      expect(await row.locator('td[data-value]').first().getAttribute('data-value')).toBe(
        String(server.calls),
      );
      for (const tool of server.tools) {
        const toolRow = page.locator(`tr.tool-row[data-key="${server.server ?? ''}/${tool.tool}"]`);
        expect(await toolRow.locator('[data-grade]').getAttribute('data-grade')).toBe(tool.grade);
      }
    }
    const toolRules = scorecard.servers.flatMap((server) =>
      server.tools.map((tool) => [`${server.server ?? ''}/${tool.tool}`, nonZero(tool.rules)] as const),
    );
    expect(await rowCounts('tr.tool-row')).toEqual(Object.fromEntries(toolRules));
    expect(toolRules.some(([, rules]) => Object.keys(rules).length > 0)).toBe(true);
    await screenshot('servers');
  });

  it('findings: the list equals the API, and a finding shows its suggested contract and fix status', async () => {
    await visit('/findings', 'Findings');
    const window = await shownWindow();
    const list = await api<{ total: number; findings: { id: string; count: number }[] }>('findings', {
      ...window,
      limit: '50',
    });
    expect(list.total).toBeGreaterThan(0);
    const rows = await tableRows('findings');
    expect(Object.keys(rows)).toEqual(list.findings.map((f) => f.id));
    for (const finding of list.findings) expect(rows[finding.id]![0]).toBe(String(finding.count));
    await screenshot('findings');

    await page.getByLabel('Rule', { exact: true }).selectOption('empty-as-error');
    await page.waitForURL(/rule=empty-as-error/);
    await page.locator('[data-table="findings"]').waitFor();
    const ruled = await api<{ findings: { id: string }[] }>('findings', {
      ...(await shownWindow()),
      rule: 'empty-as-error',
    });
    expect(Object.keys(await tableRows('findings'))).toEqual(ruled.findings.map((f) => f.id));

    const first = ruled.findings[0]!;
    await page.locator(`tr[data-key="${first.id}"] a`).click();
    await page.waitForURL(new RegExp(`/findings/${first.id}`));
    await page.getByRole('heading', { name: 'Suggested contract' }).waitFor();
    const detail = await api<{
      count: number;
      suggestedContract: { summary: string; handler: string };
      fix: unknown;
    }>(`findings/${first.id}`, { ...(await shownWindow()) });
    expect(await statValue('count')).toBe(String(detail.count));
    expect(await page.locator('.lede').textContent()).toBe(detail.suggestedContract.summary);
    expect(await page.locator('.copy-block code').last().textContent()).toBe(
      detail.suggestedContract.handler,
    );
    expect(await page.locator('.fix-status').getAttribute('data-fix-state')).toBe('none');
    await screenshot('finding');
  });

  it("shows a finding's fix as its owner received it: delivered, with the delivery counts", async () => {
    const received: string[] = [];
    const receiver: Server = createServer((request, response) => {
      request.on('data', () => {});
      request.on('end', () => {
        received.push(request.headers['webhook-id'] as string);
        response.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const project = await server.app.get(ProjectRepository).ensureProject('default');
      const admin = (await server.app.get(ApiKeyService).create(project.id, 'admin', 'cli')).key;
      const owner = await fetch(`${server.url}/api/v1/owners`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          server: 'support-desk',
          webhookUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/errata`,
        }),
      });
      expect(owner.status).toBe(201);
      const suggested = await server.app.get(FixService).runOnce();
      const findingId = suggested.find((event) => event.type === 'FixSuggested')!.data.findingId;
      for (let i = 0; i < 200 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(received.length).toBeGreaterThan(0);

      let detail: { fix: { state: string } | null; deliveries: { delivered: number } } | null = null;
      for (let i = 0; i < 200 && detail?.fix?.state !== 'delivered'; i++) {
        await new Promise((r) => setTimeout(r, 25));
        detail = await api(`findings/${findingId}`);
      }
      expect(detail!.fix!.state).toBe('delivered');
      await page.goto(`${server.url}/findings/${findingId}`);
      await page.getByRole('heading', { name: 'Fix: delivered' }).waitFor();
      expect(await page.locator('.fix-status').getAttribute('data-fix-state')).toBe('delivered');
      expect(await page.locator('[data-deliveries]').textContent()).toContain(
        `${detail!.deliveries.delivered} delivered, 0 pending, 0 failed`,
      );
      await screenshot('finding-fix-delivered');
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('shows an error state with the reason for an unknown finding, and a loading state while data is on its way', async () => {
    await visit('/findings/0123456789abcdef0123', 'Finding');
    await page.getByRole('heading', { name: 'Not found', level: 2 }).waitFor();
    await expect(page.locator('.error-message').textContent()).resolves.toContain(
      'no finding 0123456789abcdef0123',
    );
    await screenshot('error-state');

    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/v1/reports/escalations*', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${server.url}/escalations`);
    const loading = page.getByRole('status').filter({ hasText: 'Loading escalations' });
    await loading.waitFor();
    await screenshot('loading-state');
    release();
    await loading.waitFor({ state: 'detached' });
    await page.unroute('**/api/v1/reports/escalations*');
  });

  it('a project without data sees how to send some: SDK and plain-OTel snippets to copy', async () => {
    const empty = await server.app.get(ProjectRepository).ensureProject('dashboard-empty');
    const { key } = await server.app.get(ApiKeyService).create(empty.id, 'read', 'cli');
    const fresh = await context.browser()!.newPage();
    fresh.setDefaultTimeout(10_000);
    await fresh.goto(`${server.url}/`);
    await fresh.getByLabel('Read key').fill(key);
    await fresh.getByRole('button', { name: 'Sign in' }).click();
    await fresh.getByRole('heading', { name: 'No tool calls yet' }).waitFor();
    const snippets = await fresh.locator('.copy-block code').allTextContents();
    expect(snippets.join('\n')).toContain(`startErrata({ endpoint: '${server.url}'`);
    // A reader who runs `npm install @errata/sdk` gets a 404: the snippet says where the SDK comes from.
    expect(snippets.join('\n')).toContain('libs/sdk/README.md, "Install"');
    // The register route starts Errata from the environment, not from the call above
    expect(snippets.join('\n')).toContain(`ERRATA_ENDPOINT=${server.url} ERRATA_API_KEY=<ingest key>`);
    expect(snippets.join('\n')).toContain(`OTEL_EXPORTER_OTLP_ENDPOINT=${server.url}`);
    expect(await fresh.getByRole('button', { name: /^Copy: / }).count()).toBe(3);
    await fresh.screenshot({ path: join(SCREENSHOTS, 'empty-state.png'), fullPage: true });
    await fresh.close();
  });

  it('servers: a server that did not say its name opens as the (unknown) filter, which selects its calls', async () => {
    // Given a failed call to a server without serverInfo or mcp.server.name
    const at = Date.now() - 10 * 60_000;
    const nameless = { 'errata.server.name': undefined };
    const spans = new AgentTrace().run('nameless-agent', at, [
      {
        tool: 'mystery_lookup',
        startMs: at + 1,
        durationMs: 5,
        isError: true,
        text: 'Timed out',
        extra: nameless,
      },
    ]);
    expect(await sendSpans(server.url, server.ingestKey, spans)).toBe(200);
    await server.catchUp();

    // When its row on the servers page is opened
    await visit('/servers', 'Servers');
    await page.locator('tr.server-row[data-key=""] a').click();

    // Then the findings are filtered to it, not to every server, and its tools are the ones to choose from
    await page.waitForURL(/server=%28unknown%29/);
    await page.getByRole('heading', { name: 'Findings', level: 1 }).waitFor();
    expect(await page.getByLabel('Server', { exact: true }).inputValue()).toBe('(unknown)');
    // The tool list is that server's: asked for once it is chosen, after the page's own request.
    expect(await offeredNames(page, 'tool')).toEqual([
      { name: '', label: 'All tools', isolated: false },
      { name: 'mystery_lookup', label: 'mystery_lookup', isolated: true },
    ]);
  });

  it("choosing a tool or an agent does not ask for the filter bar's lists again (they do not depend on them)", async () => {
    const to = new Date(Math.ceil(Date.now() / 60_000) * 60_000);
    const window = `from=${new Date(to.getTime() - 86_400_000).toISOString()}&to=${to.toISOString()}`;
    await visit(`/retry-waste?${window}`, 'Retry waste');
    await requests.settled();
    const names: string[] = [];
    const count = (request: { url(): string }) => {
      // The lists, not a search typed into a filter (which chooseName makes)
      const url = new URL(request.url());
      if (url.pathname === '/api/v1/names' && !url.searchParams.has('search')) names.push(request.url());
    };
    page.on('request', count);
    // The view's report for the new filters is asked for in the same render as the lists would be.
    const chosen = async (name: 'Server' | 'Tool' | 'Agent', parameter: string) => {
      const report = page.waitForResponse(
        (response) =>
          new URL(response.url()).pathname === '/api/v1/reports/retry-waste' &&
          new URL(response.url()).searchParams.has(parameter),
      );
      const first = (await offeredNames(page, parameter as NameFilterName))[1]!.name;
      await chooseName(page, parameter as NameFilterName, first);
      await report;
    };
    try {
      // A server: its tools are asked for, once
      await chosen('Server', 'server');
      expect(names.length).toBe(1);
      // A tool, then an agent: the same lists, not asked for again (each was, once a choice)
      await chosen('Tool', 'tool');
      await chosen('Agent', 'agent');
      expect(names).toEqual([names[0]]);
    } finally {
      page.off('request', count);
    }
  });

  it("a finding's fix marks only the steps that happened, and says when it regressed", async () => {
    const { findings } = await api<{ findings: { id: string }[] }>('findings', { limit: '1' });
    const id = findings[0]!.id;
    const base = {
      findingId: id,
      server: 'support-desk',
      tool: 'lookup_order',
      rule: 'untyped-error',
      badVersions: ['1.0.0'],
      suggestedAt: '2026-11-01T00:00:00.000Z',
      deliveredAt: null,
      acknowledgedAt: null,
      acknowledgedBy: null,
      verifiedAt: '2026-11-02T00:00:00.000Z',
      verifiedVersion: '2.0.0',
      regressedAt: null,
    };
    const shown = async (fix: Record<string, unknown>) => {
      await page.route(`**/api/v1/findings/${id}?*`, async (route) => {
        const response = await route.fetch();
        await route.fulfill({ response, json: { ...(await response.json()), fix: { ...base, ...fix } } });
      });
      await page.goto(`${server.url}/findings/${id}`);
      await page.locator('.fix-status').waitFor();
      const steps = await page
        .locator('.fix-status .steps li')
        .evaluateAll((items) =>
          items.map((li) => `${li.getAttribute('data-step')}:${li.getAttribute('data-done')}`),
        );
      const regression = page.locator('[data-regression]');
      const warning = (await regression.count()) > 0 ? await regression.textContent() : null;
      await page.unroute(`**/api/v1/findings/${id}?*`);
      return { steps, warning };
    };

    // Verified by traffic, never delivered nor acknowledged
    expect((await shown({ state: 'verified' })).steps).toEqual([
      'suggested:true',
      'delivered:false',
      'acknowledged:false',
      'verified:true',
    ]);
    // Regressed, never delivered: no delivery or acknowledgement ticked, the regression shown
    const regressed = await shown({ state: 'regressed', regressedAt: '2026-11-03T00:00:00.000Z' });
    expect(regressed.steps).toEqual([
      'suggested:true',
      'delivered:false',
      'acknowledged:false',
      'verified:true',
      'regressed:true',
    ]);
    expect(regressed.warning).toContain('Regressed 3 Nov 2026');
    // Regressed, then delivered again: still verified once, and still regressed
    const redelivered = await shown({
      state: 'delivered',
      deliveredAt: '2026-11-04T00:00:00.000Z',
      regressedAt: '2026-11-03T00:00:00.000Z',
    });
    expect(redelivered.steps).toEqual([
      'suggested:true',
      'delivered:true',
      'acknowledged:false',
      'verified:true',
      'regressed:true',
    ]);
    expect(redelivered.warning).toContain('notified again');
    await screenshot('finding-fix-regressed');
  });

  it('a link whose window or grouping cannot be used says so, naming the parameter; "from" alone runs to now', async () => {
    const notice = page.locator('[data-url-notice]');
    await visit('/?from=2026-11-31&to=2026-12-01', 'Overview');
    expect(await notice.textContent()).toContain('"from" is not an ISO-8601 date or date-time that exists');
    expect(await notice.textContent()).toContain('Showing last 24 hours instead.');
    await screenshot('url-notice');

    const from = new Date(Date.now() - 3 * 24 * 3_600_000).toISOString();
    await visit(`/?from=${from}`, 'Overview');
    const window = await shownWindow();
    expect(window.from).toBe(from);
    expect(Date.parse(window.to)).toBeGreaterThanOrEqual(Date.now() - 60_000);
    expect(await notice.count()).toBe(0);

    await visit('/?range=2y', 'Overview');
    expect(await notice.textContent()).toContain('"range" must be one of 1h, 24h, 7d, 30d, 90d, not "2y"');
    await visit('/retry-waste?groupBy=agent', 'Retry waste');
    expect(await notice.textContent()).toContain('"groupBy" must be one of category, server, tool');
    await visit('/findings?rule=bogus', 'Findings');
    expect(await notice.textContent()).toContain('"rule" must be one of the rules below, not "bogus"');
  });

  it('a window longer than a series can be (over 1,000 days) shows its figures on every page with charts, and says why the charts are empty', async () => {
    const tooLong = page.locator('[data-series-too-long]');
    for (const [path, heading, stat] of [
      ['/', 'Overview', '[data-stat="calls"]'],
      ['/retry-waste', 'Retry waste', '[data-stat="wasted-retries"]'],
      ['/escalations', 'Escalations', '[data-stat="escalations"]'],
      ['/subagents', 'Subagent coverage', '[data-stat]'],
    ] as const) {
      await visit(`${path}?from=2020-01-01`, heading);
      expect(await page.getByRole('alert').allTextContents(), path).toEqual([]);
      expect(await page.locator(stat).count(), path).toBeGreaterThan(0);
      expect(await tooLong.textContent(), path).toContain('They cover at most 1,000 days');
    }
    await visit('/?from=2024-06-01', 'Overview'); // 914 days
    expect(await tooLong.count()).toBe(0);
  });

  it('retry waste by tool over hundreds of tools: the 8 that waste most, one "other", a readable legend', async () => {
    // Given a series grouped by 210 tools (the demo has a handful: its answer is widened)
    const keys = Array.from({ length: 210 }, (_, n) => `srv-${n % 30}/tool-${String(n).padStart(3, '0')}`);
    await page.route('**/api/v1/reports/timeseries?*', async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as {
        foldedGroups: number;
        points: { wastedRetriesBy: Record<string, number>; foldedWastedRetries: number }[];
      };
      // As if the API had kept them all (its groupLimit is 100 at most): nothing folded.
      body.foldedGroups = 0;
      for (const point of body.points) {
        point.wastedRetriesBy = Object.fromEntries(keys.map((k, n) => [k, n]));
        point.foldedWastedRetries = 0;
      }
      await route.fulfill({ response, json: body });
    });
    try {
      await visit('/retry-waste?groupBy=tool', 'Retry waste');
      // Nine series drawn, not 210 (which took seconds to render): the count, not a time, is what is checked.
      const stacked = await chartSeries('wasted-by-group');
      const names = Object.keys(stacked);
      expect(names).toEqual([...keys.slice(-8).reverse(), 'other']);
      const points = stacked['other']!.length;
      const restSum = Array.from({ length: 202 }, (_, n) => n).reduce((a, b) => a + b, 0);
      expect(stacked['other']).toEqual(Array.from({ length: points }, () => restSum));
      await screenshot('retry-waste-many-tools');
    } finally {
      await page.unroute('**/api/v1/reports/timeseries?*');
    }
  });

  it('findings: a page past the last finding says so and links to the first; a filter change starts at page one', async () => {
    const { total } = await api<{ total: number }>('findings', { limit: '1' });
    const offset = Math.ceil((total + 1) / 50) * 50;
    await visit(`/findings?range=24h&offset=${offset}`, 'Findings');
    const pastEnd = page.locator('[data-past-end]');
    expect(await pastEnd.textContent()).toContain(`There are ${total} findings`);
    expect(await page.locator('.pager').count()).toBe(0);
    await pastEnd.getByRole('link', { name: 'Go to the first page' }).click();
    await page.locator('[data-table="findings"]').waitFor();
    expect(new URL(page.url()).searchParams.get('offset')).toBeNull();

    await visit(`/findings?range=24h&offset=${offset}`, 'Findings');
    await chooseName(page, 'server', 'support-desk');
    await page.waitForURL(/server=support-desk/);
    expect(new URL(page.url()).searchParams.get('offset')).toBeNull();
    await page.locator('[data-table="findings"]').waitFor();
  });

  it('misclassified results, servers and retry waste: a page past the last group says so and links to the first (no empty table)', async () => {
    for (const [path, heading, report, table, what] of [
      [
        '/misclassified',
        'Misclassified results',
        'reports/misclassified-results',
        'misclassified',
        ['tool with misclassified results', 'tools with misclassified results'],
      ],
      ['/servers', 'Servers', 'servers', 'scorecard', ['server', 'servers']],
      ['/retry-waste', 'Retry waste', 'reports/retry-waste', 'retry-groups', ['group', 'groups']],
    ] as const) {
      const { groupCount } = await api<{ groupCount: number }>(report, { limit: '1' });
      expect(groupCount, path).toBeGreaterThan(0);
      const offset = Math.ceil((groupCount + 1) / 50) * 50;
      await visit(`${path}?range=24h&offset=${offset}`, heading);
      const pastEnd = page.locator('[data-past-end]');
      expect(await pastEnd.textContent(), path).toContain(
        `There ${groupCount === 1 ? `is 1 ${what[0]}` : `are ${groupCount} ${what[1]}`}: this page starts past the last one (offset ${offset}). Go to the first page`,
      );
      expect(await page.locator(`[data-table="${table}"], [data-empty], .pager`).count(), path).toBe(0);
      await pastEnd.getByRole('link', { name: 'Go to the first page' }).click();
      await page.locator(`[data-table="${table}"]`).waitFor();
      expect(new URL(page.url()).searchParams.get('offset'), path).toBeNull();
    }
  });

  it('a run timeline keeps the window and filters, marks the view it was opened from (none when opened bare), and its back link stays in the app when opened from a link', async () => {
    const nav = page.getByRole('navigation', { name: 'Views' });
    /** The nav's current view, if any. */
    const currentView = () =>
      nav.locator('a[aria-current="page"]').evaluateAll((links) => links.map((a) => a.textContent));
    await visit('/misclassified?range=7d', 'Misclassified results');
    const sample = page.locator('[data-sample]').first();
    await sample.click();
    await page.waitForURL(/\/traces\//);
    await page.getByRole('heading', { name: /^Run timeline/, level: 1 }).waitFor();
    const traceUrl = new URL(page.url());
    expect(traceUrl.searchParams.get('range')).toBe('7d');
    expect(await nav.getByRole('link', { name: 'Findings' }).getAttribute('href')).toBe('/findings?range=7d');
    expect(await currentView()).toEqual(['Misclassified']);

    // Opened from within the app, back goes back
    await page.getByRole('link', { name: '← Back' }).click();
    await page.waitForURL(/\/misclassified\?range=7d$/);

    // Having looked at another run of the timeline, back still goes back to the page it was opened from; opened bare,
    // another run is no page to go back to
    await visit('/retry-waste?range=7d', 'Retry waste');
    const { groups } = await api<{ groups: { samples: { traceId: string; spanId: string }[] }[] }>(
      'reports/retry-waste',
      await shownWindow(),
    );
    let picked: { traceId: string; spanId: string } | undefined;
    for (const candidate of groups.flatMap((group) => group.samples)) {
      const { runs } = await api<{ runs: unknown[] }>(`traces/${candidate.traceId}`);
      if (runs.length > 1) {
        picked = candidate;
        break;
      }
    }
    expect(picked, 'a wasted retry in a trace of several runs').toBeDefined();
    const otherRun = async () => {
      const shown = page.url();
      await page.locator('.run-list a:not([aria-current])').first().click();
      await page.waitForURL((url) => url.href !== shown);
      await page.getByRole('heading', { name: /^Run timeline/, level: 1 }).waitFor();
    };
    await page.locator(`[data-sample="${picked!.spanId}"]`).click();
    await page.getByRole('heading', { name: /^Run timeline/, level: 1 }).waitFor();
    await otherRun();
    await page.getByRole('link', { name: '← Back' }).click();
    await page.waitForURL(/\/retry-waste\?range=7d$/);
    await page.getByRole('heading', { name: 'Retry waste', level: 1 }).waitFor();
    await page.goto(`${server.url}/traces/${picked!.traceId}?range=7d`);
    await page.getByRole('heading', { name: /^Run timeline/, level: 1 }).waitFor();
    await otherRun();
    expect(await page.getByRole('link', { name: '← Back' }).count()).toBe(0);
    await page.getByRole('link', { name: '← Overview' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();

    // Opened from a shared link, there is no in-app page behind it: the link leads to the misclassified results
    await page.goto(traceUrl.href);
    await page.getByRole('heading', { name: /^Run timeline/, level: 1 }).waitFor();
    expect(await currentView()).toEqual(['Misclassified']);
    await page.getByRole('link', { name: '← Misclassified results' }).click();
    await page.getByRole('heading', { name: 'Misclassified results', level: 1 }).waitFor();
    expect(new URL(page.url()).search).toBe('?range=7d');

    // Opened bare (a trace id typed into the address bar): it came from no view, so none is marked, and the link
    // leads to the overview
    const bare = new URL(traceUrl);
    bare.search = '?range=7d';
    await page.goto(bare.href);
    await page.getByRole('heading', { name: /^Run timeline/, level: 1 }).waitFor();
    expect(await currentView()).toEqual([]);
    await page.getByRole('link', { name: '← Overview' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe('/?range=7d');

    // Opened from the retry waste page, a shared link leads back there
    await visit('/retry-waste?range=7d', 'Retry waste');
    await page.locator('[data-sample]').first().click();
    await page.waitForURL(/\/traces\//);
    const fromRetryWaste = page.url();
    await page.getByRole('heading', { name: /^Run timeline/, level: 1 }).waitFor();
    expect(await currentView()).toEqual(['Retry waste']);
    await page.goBack();
    await page.getByRole('heading', { name: 'Retry waste', level: 1 }).waitFor();
    await page.goto(fromRetryWaste);
    await page.getByRole('heading', { name: /^Run timeline/, level: 1 }).waitFor();
    expect(await currentView()).toEqual(['Retry waste']);
    await page.getByRole('link', { name: '← Retry waste' }).click();
    await page.getByRole('heading', { name: 'Retry waste', level: 1 }).waitFor();
    expect(new URL(page.url()).search).toBe('?range=7d');

    // Opened from a finding, it is the findings' view
    const { findings } = await api<{ findings: { id: string }[] }>('findings');
    await visit(`/findings/${findings[0]!.id}?range=7d`, /: /);
    await page.locator('[data-sample]').first().click();
    await page.getByRole('heading', { name: /^Run timeline/, level: 1 }).waitFor();
    expect(await currentView()).toEqual(['Findings']);

    // An unknown trace is not blamed on a time range the page does not have
    await page.goto(`${server.url}/traces/0af7651916cd43dd8448eb211c80319c`);
    await page.getByRole('heading', { name: 'Not found', level: 2 }).waitFor();
    expect(await page.getByRole('alert').textContent()).not.toContain('time range');
  });

  it('the agent filter offers the agents of the window as /names lists them, choosing one filters the figures, and an agent the list does not name still shows and clears', async () => {
    const agentFilter = page.getByLabel('Agent', { exact: true });
    await visit('/retry-waste?range=24h', 'Retry waste');
    let window = await shownWindow();
    const { agents, agentCount } = await api<{ agents: string[]; agentCount: number }>('names', window);
    // The demo's coordinators and subagents
    expect(agents.length).toBeGreaterThan(1);
    expect(agentCount).toBe(agents.length);
    expect(await offeredNames(page, 'agent', agents.length + 1)).toEqual([
      { name: '', label: 'All agents', isolated: false },
      ...[...agents].sort().map((agent) => ({ name: agent, label: agent, isolated: true })), // labels in <bdi>
    ]);
    expect(await page.locator('.filter-chip').count()).toBe(0);

    const allCalls = Number(await statValue('calls'));
    const agent = agents[0]!;
    await chooseName(page, 'agent', agent);
    await page.waitForURL((url) => url.searchParams.get('agent') === agent);
    await page.locator('.state-loading').first().waitFor({ state: 'detached' });
    window = await shownWindow();
    const filtered = await api<{ totals: Record<string, number> }>('reports/retry-waste', {
      ...window,
      agent,
    });
    expect(await statValue('calls')).toBe(String(filtered.totals['calls']));
    expect(filtered.totals['calls']).toBeLessThan(allCalls);
    expect(await agentFilter.getAttribute('title')).toBe(agent);

    // An agent the window does not have (a link from another week, say) is chosen all the same, and "All agents"
    // clears it
    await visit('/retry-waste?range=24h&agent=no-such-agent', 'Retry waste');
    expect(await agentFilter.inputValue()).toBe('no-such-agent');
    expect(await offeredNames(page, 'agent', agents.length + 2)).toContainEqual({
      name: 'no-such-agent',
      label: 'no-such-agent',
      isolated: true,
    });
    await chooseName(page, 'agent', null);
    await page.waitForURL((url) => !url.searchParams.has('agent') && url.searchParams.get('range') === '24h');
    await page.locator('.state-loading').first().waitFor({ state: 'detached' });
    expect(await agentFilter.inputValue()).toBe('');
    expect(
      (await offeredNames(page, 'agent', agents.length + 1)).map((offered) => offered.name),
    ).not.toContain('no-such-agent');
  });

  it('"← All findings" goes back to the same rule and page of findings', async () => {
    await visit('/findings?range=24h&rule=empty-as-error', 'Findings');
    await page.locator('[data-table="findings"] tbody tr a').first().click();
    await page.waitForURL(/\/findings\/[0-9a-f]+\?/);
    const back = page.getByRole('link', { name: '← All findings' });
    expect(await back.getAttribute('href')).toBe('/findings?range=24h&rule=empty-as-error');
    const id = new URL(page.url()).pathname.split('/')[2]!;
    await page.goto(`${server.url}/findings/${id}?range=24h&rule=empty-as-error&offset=50`);
    expect(await back.getAttribute('href')).toBe('/findings?range=24h&rule=empty-as-error&offset=50');
  });

  it('custom range in New York across the autumn DST change: the inputs say their time zone; the end not edited keeps its instant; the spring gap says why Apply is off', async () => {
    const ny = await browser.newContext({
      timezoneId: 'America/New_York',
      viewport: { width: 1360, height: 900 },
    });
    ny.setDefaultTimeout(10_000);
    const tab = await ny.newPage();
    try {
      // 05:00Z is 01:00 EDT, 06:30Z is the second 01:30 (EST)
      await tab.goto(`${server.url}/?from=2026-11-01T05:00:00.000Z&to=2026-11-01T06:30:00.000Z`);
      await tab.getByLabel('Read key').fill(server.readKey);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await tab.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
      // The inputs speak New York time, beside a window line in UTC: they say so
      expect(await tab.getByLabel('From', { exact: true }).inputValue()).toBe('2026-11-01T01:00');
      expect(await tab.locator('p.window').textContent()).toContain('05:00 UTC');
      for (const input of ['From', 'To']) {
        const described = await tab.getByLabel(input, { exact: true }).getAttribute('aria-describedby');
        expect(await tab.locator(`#${described}`).textContent()).toContain('America/New_York');
      }
      await tab.getByLabel('From', { exact: true }).fill('2026-11-01T00:30');
      await tab.getByRole('button', { name: 'Apply' }).click();
      await tab.waitForURL(/from=2026-11-01T04%3A30/);
      const query = new URL(tab.url()).searchParams;
      expect(query.get('from')).toBe('2026-11-01T04:30:00.000Z');
      expect(query.get('to')).toBe('2026-11-01T06:30:00.000Z');

      // 02:30 on 8 March does not exist in New York
      await tab.getByLabel('From', { exact: true }).fill('2026-03-08T02:30');
      await tab.getByLabel('To', { exact: true }).fill('2026-03-08T03:30');
      expect(await tab.getByRole('button', { name: 'Apply' }).isDisabled()).toBe(true);
      expect(await tab.locator('#filter-custom-problem').textContent()).toContain(
        '2026-03-08 02:30 does not exist in this time zone',
      );
    } finally {
      await ny.close();
    }
  });

  it('a request that never answers gives up after 30 s with the error view and Try again', async () => {
    const tab = await context.newPage();
    tab.setDefaultTimeout(10_000);
    try {
      await tab.clock.install();
      await tab.goto(`${server.url}/`);
      await tab.getByLabel('Read key').fill(server.readKey);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await tab.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
      let hang = true;
      await tab.route('**/api/v1/reports/escalations*', async (route) => {
        if (hang) return; // never answered
        await route.continue();
      });
      await tab.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Escalations' }).click();
      await tab.getByRole('status').filter({ hasText: 'Loading escalations' }).waitFor();
      await tab.clock.fastForward(29_000);
      expect(await tab.getByRole('alert').count()).toBe(0);
      await tab.clock.fastForward(2_000);
      const alert = tab.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toContain('did not answer within 30 seconds');
      hang = false;
      await alert.getByRole('button', { name: 'Try again' }).click();
      await tab.locator('[data-stat="escalations"]').waitFor();
    } finally {
      await tab.close();
    }
  });

  it('after an outage, Try again brings back the server and tool lists with the figures; a list that fails says so', async () => {
    const tab = await context.newPage();
    tab.setDefaultTimeout(10_000);
    const serverOptions = async (atLeast = 1) =>
      (await offeredNames(tab, 'server', atLeast)).map((offered) => offered.label);
    const listsFailed = tab.locator('[data-lists-failed]');
    try {
      await tab.goto(`${server.url}/`);
      await tab.getByLabel('Read key').fill(server.readKey);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await tab.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
      await offeredNames(tab, 'server');

      // Given Errata down while the range changes: the figures and the filter bar's lists both fail
      let down = true;
      await tab.route('**/api/v1/**', (route) =>
        down ? route.abort('connectionrefused') : route.continue(),
      );
      await tab.getByLabel('Time range', { exact: true }).selectOption('7d');
      const alert = tab.getByRole('alert');
      await alert.waitFor();
      await listsFailed.waitFor();
      expect(await serverOptions()).toEqual(['All servers']);
      expect((await offeredNames(tab, 'agent', 1)).map((offered) => offered.label)).toEqual(['All agents']);
      await tab.screenshot({ path: join(SCREENSHOTS, 'outage.png'), fullPage: true });

      // When it is back and the error view's Try again is clicked
      down = false;
      await alert.getByRole('button', { name: 'Try again' }).click();

      // Then the figures and the lists are back, as the scorecard lists the servers
      await tab.locator('[data-stat="calls"]').waitFor();
      await listsFailed.waitFor({ state: 'detached' });
      const window = await tab.locator('.window').evaluate((p) => ({
        from: p.getAttribute('data-from')!,
        to: p.getAttribute('data-to')!,
      }));
      const { servers } = await api<{ servers: { server: string | null }[] }>('servers', window);
      expect(await serverOptions(servers.length + 1)).toEqual([
        'All servers',
        ...servers.map((s) => s.server ?? '(unknown)').sort(),
      ]);

      // A list that fails alone says so, and loads again on request
      let listsDown = true;
      await tab.route('**/api/v1/names?*', (route) =>
        listsDown ? route.abort('connectionrefused') : route.continue(),
      );
      await tab.getByLabel('Time range', { exact: true }).selectOption('30d');
      await tab.locator('[data-stat="calls"]').waitFor();
      await listsFailed.waitFor();
      expect(await listsFailed.textContent()).toContain('could not be loaded');
      listsDown = false;
      await listsFailed.getByRole('button').click();
      await listsFailed.waitFor({ state: 'detached' });
      expect(await serverOptions(servers.length + 1)).toHaveLength(servers.length + 1);
    } finally {
      await tab.close();
    }
  });

  it('an unknown page shows the app\'s "Page not found"; grades are legible; tables scroll within a phone-wide page, and rows of charts fit it', async () => {
    await page.goto(`${server.url}/nope`);
    await page.getByRole('heading', { name: 'Page not found', level: 1 }).waitFor();
    await page.getByRole('navigation', { name: 'Views' }).waitFor();

    await visit('/servers?range=7d', 'Servers');
    const gradeColours = await page.evaluate(() => {
      const colours: Record<string, [string, string]> = {};
      for (const grade of ['A', 'B', 'C', 'D', 'F']) {
        const probe = document.createElement('span');
        probe.className = `grade grade-${grade}`;
        document.body.append(probe);
        const style = getComputedStyle(probe);
        colours[grade] = [style.color, style.backgroundColor];
        probe.remove();
      }
      return colours;
    });
    const contrasts = Object.fromEntries(
      Object.entries(gradeColours).map(([grade, [text, background]]) => [
        grade,
        contrastRatio(text, background),
      ]),
    );
    for (const [grade, ratio] of Object.entries(contrasts)) expect(ratio, grade).toBeGreaterThanOrEqual(4.5);

    await page.setViewportSize({ width: 390, height: 844 });
    try {
      for (const [path, heading, table] of [
        ['/servers?range=7d', 'Servers', 'scorecard'],
        ['/findings?range=7d', 'Findings', 'findings'],
        // Pages with a row of charts side by side on a wide screen.
        ['/retry-waste?range=7d', 'Retry waste', 'retry-groups'],
        ['/escalations?range=7d', 'Escalations', null],
        ['/subagents?range=7d', 'Subagent coverage', null],
      ] as const) {
        await visit(path, heading);
        if (table !== null) await page.locator(`[data-table="${table}"]`).waitFor();
        else await page.locator('.charts-row').first().waitFor();
        expect(await page.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(
          390,
        );
      }
      await screenshot('servers-phone');
    } finally {
      await page.setViewportSize({ width: 1360, height: 900 });
    }
  });

  it('a 256-byte server and tool name wraps: no page scrolls sideways at 1400 px, the whole name still there', async () => {
    // Given calls, one retried, to a tool and server whose names Errata stores cut to 256 bytes, without a space
    const at = Date.now() - 5 * 60_000;
    const call = {
      tool: `search_${'t'.repeat(400)}`,
      server: `server-${'s'.repeat(400)}`,
      durationMs: 5,
      isError: true,
      text: 'No results found',
    };
    const trace = new AgentTrace();
    const spans = trace.run(`agent-${'a'.repeat(400)}`, at, [
      { ...call, startMs: at + 1 },
      { ...call, startMs: at + 20 },
    ]);
    expect(await sendSpans(server.url, server.ingestKey, spans)).toBe(200);
    await server.catchUp();
    const scorecard = await api<{ servers: { server: string | null; tools: { tool: string }[] }[] }>(
      'servers',
    );
    const stored = scorecard.servers.find((s) => s.server?.startsWith('server-sss'))!;
    const [longServer, longTool] = [stored.server!, stored.tools[0]!.tool];
    expect(longServer).toMatch(/…\[truncated \d+ bytes\]$/);
    expect(longTool).toMatch(/…\[truncated \d+ bytes\]$/);
    const { findings } = await api<{ findings: { id: string }[] }>('findings', { server: longServer });
    expect(findings.length).toBeGreaterThan(0);
    const traceId = spans[0]!.spanContext().traceId;
    const { agents } = await api<{ agents: string[] }>('names');
    const longAgent = agents.find((agent) => agent.startsWith('agent-aaa'))!;
    expect(longAgent).toMatch(/…\[truncated \d+ bytes\]$/);

    // Then every page, filtered to it or not, fits a 1400 px window
    const filtered = `range=24h&server=${encodeURIComponent(longServer)}&tool=${encodeURIComponent(longTool)}&agent=${encodeURIComponent(longAgent)}`;
    await page.setViewportSize({ width: 1400, height: 900 });
    try {
      for (const [path, heading] of [
        ['/', 'Overview'],
        ['/retry-waste?groupBy=tool', 'Retry waste'],
        [`/retry-waste?groupBy=tool&${filtered}`, 'Retry waste'],
        ['/misclassified', 'Misclassified results'],
        ['/escalations', 'Escalations'],
        ['/subagents', 'Subagent coverage'],
        ['/servers', 'Servers'],
        ['/findings', 'Findings'],
        [`/findings?${filtered}`, 'Findings'],
        [`/findings/${findings[0]!.id}?${filtered}`, / server-s+…/],
        [`/traces/${traceId}?${filtered}`, /^Run timeline/],
      ] as const) {
        await visit(path, heading);
        await requests.settled(); // the filter bar's lists too
        const widths = await page.evaluate(() => ({
          page: document.documentElement.scrollWidth,
          window: window.innerWidth,
          // On a wide screen a table fits too: its names wrap rather than scroll it sideways
          tables: Array.from(document.querySelectorAll('.table-scroll')).filter(
            (box) => box.scrollWidth > box.clientWidth,
          ).length,
          // What sticks out, to say where in the message
          wide: Array.from(document.querySelectorAll('main *'))
            .filter((element) => element.getBoundingClientRect().right > window.innerWidth)
            .slice(0, 5)
            .map((element) => `${element.tagName.toLowerCase()}.${element.className}`),
        }));
        expect(widths.page, `${path}: ${widths.wide.join(' ')}`).toBeLessThanOrEqual(widths.window);
        expect(widths.tables, path).toBe(0);
      }
      await screenshot('long-names-timeline');
      // The filters cut the names short on screen, and keep them whole on hover
      await visit(`/servers?${filtered}`, 'Servers');
      await screenshot('long-names-servers');
      expect(await page.getByLabel('Server', { exact: true }).getAttribute('title')).toBe(longServer);
      expect(await page.getByLabel('Tool', { exact: true }).getAttribute('title')).toBe(longTool);
      expect(await page.getByLabel('Agent', { exact: true }).getAttribute('title')).toBe(longAgent);
    } finally {
      await page.setViewportSize({ width: 1360, height: 900 });
    }
  });

  it('a key that stops working sends the user back to sign in, with a note', async () => {
    await page.evaluate(() => sessionStorage.setItem('errata.readKey', 'revoked-key'));
    await page.goto(`${server.url}/servers`);
    await page.getByRole('heading', { name: 'Sign in to Errata' }).waitFor();
    await expect(page.getByRole('status').first().textContent()).resolves.toContain('did not accept');
    expect(await page.evaluate(() => sessionStorage.getItem('errata.readKey'))).toBeNull();
  });
});
