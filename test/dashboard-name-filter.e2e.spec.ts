/**
 * The dashboard's server, tool and agent filters in a real browser (Debian's chromium via playwright-core) against a
 * real Errata (PostgreSQL) with more names than `GET /names` lists (1,000): 1,100 servers and tools. A name beyond the
 * first 1,000 is found by typing part of it and chosen with the keyboard alone; the filters are comboboxes axe finds
 * nothing serious in.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { axeFindings } from './support/axe-audit';
import { launchChromium } from './support/browser';
import { seedOneCallServers } from './support/demo-seed';
import { startTestServer, type TestServer } from './support/server';

/** One call each of `ping-<j>` to `srv-<j>`: 100 of each past the 1,000 names a list holds. */
const NAMES = 1_100;

let server: TestServer;
let browser: Browser;
let page: Page;
/** The `search` of each `GET /names` the page asked for (null: none). */
const searches: (string | null)[] = [];

beforeAll(async () => {
  server = await startTestServer('postgres');
  await seedOneCallServers(server, NAMES, Date.now() - 3_600_000);
  await server.catchUp();
  browser = await launchChromium();
  // axe is injected as an inline script, which the pages' content-security policy rightly refuses.
  const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1360, height: 900 } });
  context.setDefaultTimeout(15_000);
  await context.addInitScript((key) => sessionStorage.setItem('errata.readKey', key), server.readKey);
  page = await context.newPage();
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.pathname === '/api/v1/names') searches.push(url.searchParams.get('search'));
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const tool = () => page.locator('#filter-tool');
const options = () => page.locator('#filter-tool-list [role="option"]');
const optionNames = () =>
  options().evaluateAll((all) => all.map((option) => option.getAttribute('data-name')));
const focusedId = () => page.evaluate(() => document.activeElement?.id);
/** The option aria-activedescendant points at: its name. */
const activeName = () =>
  tool().evaluate((input) => {
    const active = input.getAttribute('aria-activedescendant');
    return active === null ? null : document.getElementById(active)!.getAttribute('data-name');
  });

it('finds a tool beyond the first 1,000 by typing part of it, any case, and chooses it with the keyboard alone', async () => {
  await page.goto(`${server.url}/servers`);
  await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();
  // Tab to the tool filter, as a keyboard user gets there.
  for (let i = 0; i < 30 && (await focusedId()) !== 'filter-tool'; i++) await page.keyboard.press('Tab');
  expect(await focusedId()).toBe('filter-tool');
  expect(await tool().getAttribute('role')).toBe('combobox');
  expect(await tool().getAttribute('aria-expanded')).toBe('false');

  // An arrow key on the closed filter opens its list: it chooses nothing, the URL stays.
  const before = page.url();
  await page.keyboard.press('ArrowDown');
  expect(await tool().getAttribute('aria-expanded')).toBe('true');
  await options().nth(1_000).waitFor();
  expect(page.url()).toBe(before);
  // "All tools" and the first 1,000 by name; the list says how many more there are.
  expect(await options().count()).toBe(1_001);
  expect(await optionNames()).not.toContain('ping-999');
  expect(await page.locator('#filter-tool ~ .combobox-popup [data-cut]').textContent()).toBe(
    '100 more — type to narrow',
  );
  expect(await activeName()).toBe(''); // "All tools", the filter's value
  expect(await page.locator('#filter-tool-status').textContent()).toBe(
    '1,000 of 1,100 tools listed: type to narrow.',
  );

  // Part of the name, not its start, in another case: the API is asked once typing pauses, not per key.
  const asked = searches.length;
  await page.keyboard.type('NG-99');
  await page.locator('#filter-tool-status', { hasText: '11 tools contain “NG-99”.' }).waitFor();
  expect(await optionNames()).toEqual([
    '',
    'ping-99',
    ...Array.from({ length: 10 }, (_, k) => `ping-99${k}`),
  ]);
  expect(searches.slice(asked).at(-1)).toBe('NG-99');
  expect(searches.length - asked).toBeLessThan('NG-99'.length);
  expect(await page.locator('#filter-tool ~ .combobox-popup [data-cut]').count()).toBe(0);

  // Down to the last, ping-999, and Enter: the URL's `tool` is it, as the select's was.
  for (let i = 0; i < 12; i++) await page.keyboard.press('ArrowDown'); // past "All tools" and ping-99…998
  expect(await activeName()).toBe('ping-999');
  await page.keyboard.press('ArrowDown'); // the last option: it stays
  expect(await activeName()).toBe('ping-999');
  await page.keyboard.press('Enter');
  await page.waitForURL(/[?&]tool=ping-999(&|$)/);
  await page.locator('#filter-tool[aria-expanded="false"]').waitFor();
  expect(await tool().inputValue()).toBe('ping-999');
  expect(await focusedId()).toBe('filter-tool');

  // Escape closes the list and puts back the chosen name, choosing nothing.
  await page.keyboard.type('zz');
  expect(await tool().getAttribute('aria-expanded')).toBe('true');
  await page.keyboard.press('Escape');
  expect(await tool().getAttribute('aria-expanded')).toBe('false');
  expect(await tool().inputValue()).toBe('ping-999');
  expect(new URL(page.url()).searchParams.get('tool')).toBe('ping-999');

  // A link with a name past the first 1,000 shows it chosen and offers it, by name among the others; emptied, the
  // box offers the first 1,000 again, and "All tools" (the first option) clears the filter.
  await page.goto(`${server.url}/servers?tool=ping-950`);
  await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();
  expect(await tool().inputValue()).toBe('ping-950');
  await tool().focus();
  await page.keyboard.press('ArrowUp');
  await options().nth(1_001).waitFor();
  expect(await activeName()).toBe('ping-950');
  expect(await tool().getAttribute('aria-activedescendant')).toBe('filter-tool-option-1001');
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.press('Backspace');
  await page.keyboard.press('ArrowDown');
  expect(await activeName()).toBe('');
  await page.keyboard.press('Enter');
  await page.waitForURL((url) => !url.searchParams.has('tool'));
  expect(await tool().inputValue()).toBe('');
}, 120_000);

it('finds a server the same way; the filters, open and searching, have no serious axe finding', async () => {
  await page.goto(`${server.url}/retry-waste`);
  await page.getByRole('heading', { name: 'Retry waste', level: 1 }).waitFor();
  const filter = page.locator('#filter-server');
  await filter.focus();
  await page.keyboard.type('rv-107');
  await page.locator('#filter-server-status', { hasText: '11 servers contain “rv-107”.' }).waitFor();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  expect(await filter.getAttribute('aria-activedescendant')).toBe('filter-server-option-1');
  expect(await page.locator('#filter-server-option-1').getAttribute('data-name')).toBe('srv-107');
  expect(await axeFindings(page, undefined, 'form.filters')).toEqual([]);
  await page.keyboard.press('Enter');
  await page.waitForURL(/[?&]server=srv-107(&|$)/);
  // The tools listed are the server's.
  await page.locator('#filter-tool').focus();
  await page.keyboard.press('ArrowDown');
  await page.locator('#filter-tool-status', { hasText: '1 tool.' }).waitFor();
  expect(await optionNames()).toEqual(['', 'ping-107']);
  expect(await axeFindings(page, undefined, 'form.filters')).toEqual([]);
}, 60_000);
