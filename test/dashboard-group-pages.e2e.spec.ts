/**
 * The dashboard's grouped reports in a real browser (Debian's chromium via playwright-core) when a report has more
 * groups than one page: the table shows the API's first page, says "of N", and pages on with Next and Previous.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AgentTrace, type ToolCallSpec } from './support/agent-spans';
import { launchChromium } from './support/browser';
import { offeredNames, openNameFilter } from './support/name-filter';
import { seedOneCallServers } from './support/demo-seed';
import { sendSpans, startTestServer, type TestServer } from './support/server';

/** Tools each retried once, wastefully: more groups than the page of 50 shows. */
const TOOLS = 120;

let server: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  server = await startTestServer('postgres');
  const t0 = Date.now() - 3_600_000; // within the dashboard's default window (the last 24 hours)
  const calls: ToolCallSpec[] = [];
  for (let i = 0; i < TOOLS; i++) {
    const failure = { tool: `tool-${i}`, isError: true, category: 'business', text: 'over the limit' };
    calls.push({ ...failure, startMs: t0 + i * 1_000, durationMs: 1 });
    calls.push({ ...failure, startMs: t0 + i * 1_000 + 100, durationMs: 1 + (i % 30) });
  }
  expect(await sendSpans(server.url, server.ingestKey, new AgentTrace().run('pager-agent', t0, calls))).toBe(
    200,
  );
  // 55 more servers, one call each: 56 on the scorecard.
  await seedOneCallServers(server, 55, t0);
  await server.catchUp();
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  context.setDefaultTimeout(15_000);
  page = await context.newPage();
  await page.goto(`${server.url}/`);
  await page.getByLabel('Read key').fill(server.readKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

interface Groups {
  readonly groupCount: number;
  readonly groups: readonly { readonly key: string }[];
}

async function apiGroups(offset: number): Promise<Groups> {
  const response = await fetch(
    `${server.url}/api/v1/reports/retry-waste?groupBy=tool&limit=50&offset=${offset}`,
    { headers: { authorization: `Bearer ${server.readKey}` } },
  );
  return (await response.json()) as Groups;
}

const rowKeys = () =>
  page
    .locator('[data-table="retry-groups"] tbody tr')
    .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-key')));

it('shows the first 50 of 120 groups by tool, says "of 120", and pages with Next and Previous, keeping focus on the button', async () => {
  await page.goto(`${server.url}/retry-waste?groupBy=tool`);
  await page.getByRole('heading', { name: 'Retry waste', level: 1 }).waitFor();
  const pager = page.getByRole('navigation', { name: 'Pages of retries by tool' });
  await pager.waitFor();
  expect(await pager.locator('[data-page-range]').textContent()).toBe('1–50 of 120');
  expect(await rowKeys()).toEqual((await apiGroups(0)).groups.map((group) => group.key));
  expect(await pager.getByRole('button', { name: 'Previous' }).isDisabled()).toBe(true);

  await pager.getByRole('button', { name: 'Next' }).focus();
  await page.keyboard.press('Enter');
  await page.waitForURL(/offset=50/);
  await page.locator('[data-page-range]', { hasText: '51–100 of 120' }).waitFor();
  expect(await rowKeys()).toEqual((await apiGroups(50)).groups.map((group) => group.key));
  // Focus stays on the pager's Next once the page is drawn anew (focus.ts).
  await page.waitForFunction(() => document.activeElement?.textContent === 'Next');

  await page.getByRole('button', { name: 'Next' }).click();
  await page.locator('[data-page-range]', { hasText: '101–120 of 120' }).waitFor();
  expect(await rowKeys()).toHaveLength(20);
  expect(await page.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);

  await page.getByRole('button', { name: 'Previous' }).click();
  await page.locator('[data-page-range]', { hasText: '51–100 of 120' }).waitFor();

  // The chart of wasted retries by tool: the API keeps 9 of the 120 groups; 8 drawn, the other 112 in "other".
  const figure = page.locator('[data-chart="wasted-by-group"]');
  await figure.locator('canvas').first().waitFor();
  const stacked = JSON.parse((await figure.getAttribute('data-series'))!) as Record<string, number[]>;
  const names = Object.keys(stacked);
  expect(names).toHaveLength(9);
  expect(names.at(-1)).toBe('other');
  const total = (values: number[]) => values.reduce((a, b) => a + b, 0);
  expect(total(stacked['other']!)).toBe(TOOLS - 8);
  expect(Object.values(stacked).reduce((sum, values) => sum + total(values), 0)).toBe(TOOLS);

  // Another grouping starts at its first page: by category there is one group, and no pager.
  await page
    .getByRole('group', { name: 'Group retries by' })
    .getByRole('button', { name: 'category' })
    .click();
  await page.waitForURL((url) => !url.search.includes('offset'));
  await page.locator('[data-table="retry-groups"] tbody tr[data-key="business"]').waitFor();
  expect(await page.locator('.pager').count()).toBe(0);
}, 120_000);

it('shows the first 50 of 56 servers on the scorecard, and the rest on the next page', async () => {
  await page.goto(`${server.url}/servers`);
  const pager = page.getByRole('navigation', { name: 'Pages of servers' });
  await pager.waitFor();
  expect(await pager.locator('[data-page-range]').textContent()).toBe('1–50 of 56');
  await pager.getByRole('button', { name: 'Next' }).click();
  await page.locator('[data-page-range]', { hasText: '51–56 of 56' }).waitFor();
  expect(new URL(page.url()).searchParams.get('offset')).toBe('50');
  // The filter bar's server list still names every server, not the scorecard's first page.
  expect(await offeredNames(page, 'server', 57)).toHaveLength(57); // "All servers" and 56
}, 60_000);

it('lists 10 tools per server among all servers, linking to the server, whose page lists its 120 tools 50 at a time', async () => {
  await page.goto(`${server.url}/servers?offset=50`); // after the 55 srv-…, by name
  const table = page.locator('[data-table="scorecard"]');
  const more = table.locator('tbody[data-server="test-server"] [data-more-tools]');
  await more.waitFor();
  // 56 servers, a tool each but test-server's 10 of 120: a page of 50 servers is at most 550 rows, not 2,550.
  expect(await table.locator('tbody[data-server="test-server"] tr.tool-row').count()).toBe(10);
  expect(await more.getAttribute('data-more-tools')).toBe('110');
  expect(await more.textContent()).toContain('110 more of its 120 tools not shown');
  await more.getByRole('link', { name: 'All 120 tools of test-server' }).click();
  await page.waitForURL(
    (url) => url.pathname === '/servers' && url.searchParams.get('server') === 'test-server',
  );

  const pager = page.getByRole('navigation', { name: "Pages of the server's tools" });
  await pager.waitFor();
  const toolKeys = () =>
    table.locator('tr.tool-row').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-key')));
  const apiTools = async (offset: number) => {
    const response = await fetch(
      `${server.url}/api/v1/servers?server=test-server&toolLimit=50&toolOffset=${offset}`,
      { headers: { authorization: `Bearer ${server.readKey}` } },
    );
    const body = (await response.json()) as { servers: { tools: { tool: string }[] }[] };
    return body.servers[0]!.tools.map((tool) => `test-server/${tool.tool}`);
  };
  expect(await pager.locator('[data-page-range]').textContent()).toBe('1–50 of 120');
  expect(await toolKeys()).toEqual(await apiTools(0));
  expect(await table.locator('[data-more-tools]').count()).toBe(0);
  await pager.getByRole('button', { name: 'Next' }).click();
  await page.locator('[data-page-range]', { hasText: '51–100 of 120' }).waitFor();
  expect(await toolKeys()).toEqual(await apiTools(50));
  await pager.getByRole('button', { name: 'Next' }).click();
  await page.locator('[data-page-range]', { hasText: '101–120 of 120' }).waitFor();
  expect(await toolKeys()).toEqual(await apiTools(100));
  // The server's figures count every tool's calls; the filter bar lists all 120 tools (the API's names of them).
  expect(await table.locator('tr.server-row td.num').first().getAttribute('data-value')).toBe('240');
  // Past its last tool: how many there are, and the way back.
  await page.goto(`${server.url}/servers?server=test-server&offset=500`);
  expect(await page.locator('[data-past-end]').textContent()).toContain('There are 120 tools');
  await page.goto(`${server.url}/servers?server=test-server`);
  await pager.waitFor();
  const tools = await openNameFilter(page, 'tool');
  await tools.nth(120).waitFor();
  expect(await tools.count()).toBe(121);
  expect(await page.locator('.combobox-popup [data-cut]').count()).toBe(0);
  await page.keyboard.press('Escape');

  // More names than the API lists (its `limit`): each list says it does not name them all.
  await page.route('**/api/v1/names?*', async (route) => {
    const response = await route.fetch();
    const body = (await response.json()) as { serverCount: number; toolCount: number };
    body.serverCount += 1_000;
    body.toolCount += 1_000;
    await route.fulfill({ response, json: body });
  });
  try {
    await page.reload();
    // "1,000 more — type to narrow" under the 120 tools listed, and under the 56 servers.
    const toolOptions = await openNameFilter(page, 'tool');
    await toolOptions.nth(120).waitFor();
    const cut = page.locator('#filter-tool ~ .combobox-popup [data-cut]');
    expect(await cut.textContent()).toMatch(/^1.000 more — type to narrow$/);
    expect(await toolOptions.count()).toBe(121);
    await page.keyboard.press('Escape');
    await openNameFilter(page, 'server');
    expect(await page.locator('#filter-server ~ .combobox-popup [data-cut]').textContent()).toMatch(
      /^1.000 more — type to narrow$/,
    );
    await page.keyboard.press('Escape');
  } finally {
    await page.unroute('**/api/v1/names?*');
  }
}, 60_000);

it("a chart's series are switched off and on from the keyboard, as its canvas legend does with a mouse", async () => {
  await page.goto(`${server.url}/retry-waste?groupBy=tool`);
  await page.getByRole('heading', { name: 'Retry waste', level: 1 }).waitFor();
  const keys = page.locator('.chart-series-keys').first();
  await keys.locator('button').first().waitFor({ state: 'attached' });
  // Out of sight until a key has focus, reached with Tab
  expect((await keys.boundingBox())!.x).toBeLessThan(0);
  const inKeys = () => page.evaluate(() => document.activeElement?.closest('.chart-series-keys') !== null);
  for (let i = 0; i < 60 && !(await inKeys()); i++) await page.keyboard.press('Tab');
  expect(await inKeys()).toBe(true);
  expect((await keys.boundingBox())!.x).toBeGreaterThanOrEqual(0);
  const key = page.locator(':focus');
  const name = await key.textContent();
  const figure = page.locator('figure.chart', { has: key });
  expect(await key.getAttribute('aria-pressed')).toBe('true');
  await page.keyboard.press('Space');
  expect(await key.getAttribute('aria-pressed')).toBe('false');
  expect(JSON.parse((await figure.getAttribute('data-hidden'))!)).toEqual([name]);
  await page.keyboard.press('Enter');
  expect(await key.getAttribute('aria-pressed')).toBe('true');
  expect(await figure.getAttribute('data-hidden')).toBe('[]');
}, 60_000);
