/**
 * Names and texts an ingest key sends are shown to read-key holders: markup in them must stay text on every page,
 * chart tooltips (ECharts renders its axis and legend tooltips as HTML strings) included. The Content-Security-Policy
 * would block an inline handler, but not markup, so this runs with it bypassed: escaping must hold on its own.
 * Every free-text field a span carries holds markup, those no page shows yet too (declared category and code,
 * conversation id, escalation reason, a report's attempts and alternatives), so a view that starts showing one is
 * checked as well.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentTrace } from './support/agent-spans';
import { launchChromium, signedInPage } from './support/browser';
import { openNameFilter } from './support/name-filter';
import { sendSpans, startTestServer, type TestServer } from './support/server';

/** Markup a hostile name carries; `tag` tells the fields apart in a failure's message. */
const payload = (tag: string) =>
  `${tag}<b id=injected>bold</b><img src=x onerror=window.__xss=1>"><svg onload=window.__xss=2><i>${tag}-long-name-past-the-legend-width</i>`;

const TOOLS = [payload('tool-a'), payload('tool-b'), payload('tool-c')];
const SERVER = payload('server');

/**
 * What markup from a payload left in the page (elements it made, a javascript: link, a handler that ran), and the
 * text of the tooltips ECharts shows beside a chart's canvas when `host` is one (`.chart-canvas`), in one round trip.
 */
function inspect(host: Element) {
  const injected: string[] = [];
  if (document.querySelector('#injected')) injected.push('#injected');
  for (const img of document.querySelectorAll('img'))
    if (img.getAttribute('src') === 'x') injected.push('<img src=x>');
  for (const svg of document.querySelectorAll('svg[onload]')) injected.push(`<svg onload> ${svg.outerHTML}`);
  for (const a of document.querySelectorAll('a[href]'))
    if (/^\s*javascript:/i.test(a.getAttribute('href')!)) injected.push(`javascript: link ${a.outerHTML}`);
  if ((window as unknown as { __xss?: unknown }).__xss !== undefined) injected.push('window.__xss set');
  const tooltips = host.matches('.chart-canvas')
    ? Array.from(host.children)
        .slice(1) // the first holds ECharts' canvas; a tooltip is a div beside it
        .filter((div) => (div as HTMLElement).style.display !== 'none')
        .map((div) => div.textContent ?? '')
    : [];
  return { injected, tooltips };
}

describe('dashboard: markup in names and texts stays text', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let traceId = '';
  let subagentTraceId = '';
  beforeAll(async () => {
    server = await startTestServer('postgres');
    await server.db.updateTable('project').set({ store_arguments: true }).execute();
    const t0 = Date.now() - 10 * 60_000;
    const trace = new AgentTrace();
    // Untyped failures retried unchanged (wasted retries, findings) on three tools, so charts have a legend.
    const calls = TOOLS.flatMap((tool, t) =>
      [0, 1, 2].map((i) => ({
        tool,
        server: SERVER,
        startMs: t0 + t * 60_000 + i * 1000,
        durationMs: 10,
        isError: true,
        text: payload('text'),
        category: i === 0 ? payload('category') : undefined,
        argsHash: `a1b2c3d4e5f60718293a4b5c6d7e8f9${t}`,
        extra: {
          'errata.server.version': payload('version'),
          'errata.error.code': payload('code'),
          'gen_ai.tool.call.arguments': JSON.stringify({
            q: payload('argument'),
            url: 'javascript:alert(1)',
          }),
        },
      })),
    );
    trace.run(payload('agent'), t0, calls, 'coordinator', {
      'gen_ai.conversation.id': payload('conversation'),
      'gen_ai.agent.id': 'javascript:alert(1)',
    });
    const spans = trace.subagentHandBack(
      payload('subagent'),
      t0 + 5 * 60_000,
      {
        'errata.subagent.attempted': [payload('attempted')],
        'errata.subagent.alternatives': [payload('alternative')],
        'errata.error.category': payload('report-category'),
      },
      { 'errata.escalation.reason': payload('reason') },
    );
    const runOf = (agent: string) =>
      spans.find((span) => span.attributes['gen_ai.agent.name'] === payload(agent))!.spanContext().traceId;
    traceId = runOf('agent');
    subagentTraceId = runOf('subagent');
    expect(await sendSpans(server.url, server.ingestKey, spans)).toBe(200);
    await server.catchUp();
    browser = await launchChromium();
    page = await signedInPage(browser, server.readKey, { bypassCSP: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** The payloads' tags whose markup the page shows as text (not vacuous: the hostile names are on it). */
  const shownAsText = () =>
    page.evaluate(() =>
      Array.from(document.body.innerText.matchAll(/([a-z-]+)<b id=injected>/g), (m) => m[1]).filter(
        (tag, i, all) => all.indexOf(tag) === i,
      ),
    );

  /** The payloads' tags the filter bar's lists show as text, each list opened in turn (and checked for markup). */
  async function shownInFilters() {
    const tags: string[] = [];
    for (const name of ['server', 'tool', 'agent'] as const) {
      const options = await openNameFilter(page, name);
      await options.nth(1).waitFor();
      expect((await page.locator('body').evaluate(inspect)).injected).toEqual([]);
      const text = await page.locator(`#filter-${name}-list`).innerText();
      tags.push(...Array.from(text.matchAll(/([a-z-]+)<b id=injected>/g), (m) => m[1]!));
      await page.keyboard.press('Escape');
    }
    return tags;
  }

  /**
   * Hovers each chart's legend row and plot, where ECharts shows its tooltips (HTML strings), checking the page at
   * each point; returns the payloads' tags a legend tooltip and an axis tooltip showed as text.
   */
  async function hoverCharts() {
    const shown = { legend: new Set<string>(), axis: new Set<string>(), utc: false };
    const canvases = page.locator('.chart-canvas');
    for (let c = 0; c < (await canvases.count()); c++) {
      const canvas = canvases.nth(c);
      await canvas.scrollIntoViewIfNeeded();
      const box = (await canvas.boundingBox())!;
      for (const [row, fy] of [
        ['legend', 0.04],
        ['axis', 0.6],
      ] as const)
        for (let fx = 0.04; fx < 1; fx += 0.1) {
          await page.mouse.move(box.x + box.width * fx, box.y + box.height * fy);
          const { injected, tooltips } = await canvas.evaluate(inspect);
          expect(injected).toEqual([]);
          for (const text of tooltips) {
            for (const match of text.matchAll(/([a-z-]+)<b id=injected>/g)) shown[row].add(match[1]!);
            // A time chart's heading: its bucket's start, its zone said ("30 Nov 2026, 08:00 UTC")
            if (/^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC/.test(text)) shown.utc = true;
          }
        }
    }
    return shown;
  }

  // Per page: the payloads shown as text besides the filter bar's servers, tools and agents (on every page), and
  // those a legend tooltip and an axis tooltip show (the charts whose series are named by the senders).
  it.each([
    ['overview', '/?range=24h', [], { legend: [], axis: [] }],
    ['findings', '/findings?range=24h', ['tool-b', 'tool-c'], { legend: [], axis: [] }],
    [
      'retry waste by tool',
      '/retry-waste?range=24h&groupBy=tool',
      ['tool-b'],
      { legend: ['server', 'tool-a', 'tool-b'], axis: ['server', 'tool-a'] },
    ],
    ['retry waste by server', '/retry-waste?range=24h&groupBy=server', [], { legend: [], axis: ['server'] }],
    ['retry waste by category', '/retry-waste?range=24h&groupBy=category', [], { legend: [], axis: [] }],
    ['misclassified', '/misclassified?range=24h', [], { legend: [], axis: [] }],
    ['escalations', '/escalations?range=24h', [], { legend: [], axis: [] }],
    ['subagents', '/subagents?range=24h', ['subagent'], { legend: [], axis: [] }],
    ['servers', '/servers?range=24h', ['version', 'tool-c'], { legend: [], axis: [] }],
  ])('%s: names shown as text, in chart tooltips too', async (_, path, onPage, inTooltips) => {
    await page.goto(`${server.url}${path}`);
    await page.locator('main h1').waitFor();
    await page.waitForLoadState('networkidle');
    expect((await page.locator('body').evaluate(inspect)).injected).toEqual([]);
    expect([...(await shownAsText()), ...(await shownInFilters())]).toEqual(
      expect.arrayContaining(['server', 'tool-a', 'agent', ...onPage]),
    );
    const shown = await hoverCharts();
    expect([...shown.legend]).toEqual(expect.arrayContaining(inTooltips.legend));
    expect([...shown.axis]).toEqual(expect.arrayContaining(inTooltips.axis));
    // The charts over time (not on the findings, misclassified or servers pages) say in their tooltips that the
    // times are UTC.
    expect(shown.utc).toBe(!/^\/(findings|misclassified|servers)\?/.test(path));
  });

  it.each([
    ['coordinator', () => traceId, ['agent', 'tool-a', 'server', 'argument', 'text']],
    ['subagent', () => subagentTraceId, ['subagent']],
  ])("the %s's trace: names, texts and arguments shown as text", async (_, trace, tags) => {
    await page.goto(`${server.url}/traces/${trace()}?range=24h`);
    await page.locator('main h1').waitFor();
    await page.waitForLoadState('networkidle');
    for (const summary of await page.locator('summary').all()) await summary.click();
    expect((await page.locator('body').evaluate(inspect)).injected).toEqual([]);
    expect(await shownAsText()).toEqual(expect.arrayContaining(tags));
  });

  it("every finding's page, its folded sections opened", async () => {
    await page.goto(`${server.url}/findings?range=24h`);
    const rows = page.locator('tr[data-key]');
    await rows.first().waitFor();
    const ids = await rows.evaluateAll((all) => all.map((row) => row.getAttribute('data-key')!));
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) {
      await page.goto(`${server.url}/findings/${id}?range=24h`);
      await page.locator('main h1').waitFor();
      await page.waitForLoadState('networkidle');
      for (const toggle of await page.locator('details > summary').all()) await toggle.click();
      expect((await page.locator('body').evaluate(inspect)).injected).toEqual([]);
      expect([...(await shownAsText()), ...(await shownInFilters())]).toEqual(
        expect.arrayContaining(['server', 'tool-a', 'version', 'text']),
      );
    }
  });
});
