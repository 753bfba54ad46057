import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentTrace } from './support/agent-spans';
import { launchChromium, signedInPage } from './support/browser';
import { chooseName, offeredNames } from './support/name-filter';
import { sendSpans, startTestServer, type TestServer } from './support/server';

// A server name ending in a right-to-left override it never closes (U+202E), beside an ordinary tool name.
const SERVER = 'billing\u202e';
const TOOL = 'refund_all';

/**
 * Where the tool name's first and last letters are drawn in `cell`, and where the server name's first letter is (from
 * the rects of one-character Ranges): a name read left to right has its first letter left of its last.
 */
function letterPositions(cell: Element, names: { server: string; tool: string }) {
  const { server, tool } = names;
  const left = (node: Text, offset: number) => {
    const range = document.createRange();
    range.setStart(node, offset);
    range.setEnd(node, offset + 1);
    return range.getBoundingClientRect().left;
  };
  const find = (text: string) => {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
      const at = node.data.indexOf(text);
      if (at >= 0) return { node, at };
    }
    throw new Error(`no "${text}" in ${cell.outerHTML}`);
  };
  const t = find(tool);
  const s = find(server);
  return {
    toolFirst: left(t.node, t.at),
    toolLast: left(t.node, t.at + tool.length - 1),
    serverFirst: left(s.node, s.at),
  };
}

describe('dashboard: a bidi control in a name reorders no other name', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    server = await startTestServer('postgres');
    // Failures without a category (an untyped-error finding), retried unchanged (wasted retries).
    const t0 = Date.now() - 10 * 60_000;
    const spans = new AgentTrace().run(
      'bidi-agent',
      t0,
      [0, 1, 2].map((i) => ({
        tool: TOOL,
        server: SERVER,
        startMs: t0 + i * 1000,
        durationMs: 10,
        isError: true,
        text: 'failed',
        argsHash: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
      })),
    );
    expect(await sendSpans(server.url, server.ingestKey, spans)).toBe(200);
    await server.catchUp();
    browser = await launchChromium();
    page = await signedInPage(browser, server.readKey);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const positionsIn = async (path: string, cell: string) => {
    await page.goto(`${server.url}${path}`);
    const found = page.locator(cell, { hasText: TOOL }).first();
    await found.waitFor();
    return found.evaluate(letterPositions, { server: SERVER.slice(0, 7), tool: TOOL });
  };

  it.each([
    ['findings: server / tool', '/findings?range=24h', 'td.name'],
    ['retry waste by tool: server/tool', '/retry-waste?range=24h&groupBy=tool', 'tbody th'],
  ])('%s: the tool name reads left to right, after the server name', async (_, path, cell) => {
    const { toolFirst, toolLast, serverFirst } = await positionsIn(path, cell);
    expect(toolLast).toBeGreaterThan(toolFirst);
    expect(toolFirst).toBeGreaterThan(serverFirst);
  });

  it("a finding's page: its heading's tool name reads left to right, after the server name", async () => {
    await page.goto(`${server.url}/findings?range=24h`);
    const row = page.locator('tr[data-key]', { hasText: TOOL }).first();
    const id = await row.getAttribute('data-key');
    const { toolFirst, toolLast, serverFirst } = await positionsIn(`/findings/${id}?range=24h`, 'h1');
    expect(toolLast).toBeGreaterThan(toolFirst);
    expect(toolFirst).toBeGreaterThan(serverFirst);
  });

  it("the filter bar's server and tool options: labels isolated (<bdi>), values the names", async () => {
    await page.goto(`${server.url}/findings?range=24h`);
    expect((await offeredNames(page, 'server'))[1]).toEqual({ name: SERVER, label: SERVER, isolated: true });
    await chooseName(page, 'server', SERVER);
    await page.waitForURL((url) => url.searchParams.get('server') === SERVER);
    expect(await offeredNames(page, 'tool')).toContainEqual({ name: TOOL, label: TOOL, isolated: true });
  });

  it("the filter bar's agent options: labels isolated, values the names, an agent from the URL alone among them", async () => {
    // An override opening a name the window does not have: it is chosen, isolated as the listed ones are.
    const agent = '\u202ebidi-agent';
    await page.goto(`${server.url}/findings?range=24h&agent=${encodeURIComponent(agent)}`);
    expect(await offeredNames(page, 'agent', 3)).toEqual([
      { name: '', label: 'All agents', isolated: false },
      { name: 'bidi-agent', label: 'bidi-agent', isolated: true },
      { name: agent, label: agent, isolated: true },
    ]);
    expect(await page.locator('#filter-agent').inputValue()).toBe(agent);
  });
});
