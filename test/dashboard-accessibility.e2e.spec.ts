/**
 * The dashboard's accessibility in a real browser (Debian's chromium via playwright-core) against a real Errata
 * (PostgreSQL) seeded by the demo agent, plus 55 one-call servers (two pages of the scorecard). axe-core finds no
 * serious or critical violation on any view, at desktop and phone widths, light and dark; a keyboard alone signs in,
 * moves between views, retries what failed, pages a table and follows a sample to its call on the run timeline, with
 * focus where the reader expects it and a ring that shows; each chart's figures are in a table; the overview reflows
 * at 320 px.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ProjectRepository } from '../apps/server/src/repositories/project.repository';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { axeFindings } from './support/axe-audit';
import { contrastRatio, launchChromium, requestsOf, type PageRequests } from './support/browser';
import { seedOneCallServers, seedWithDemo } from './support/demo-seed';
import { startTestServer, type TestServer } from './support/server';

let server: TestServer;
let browser: Browser;
let page: Page;
/** A view has settled when none of the page's requests is left. */
let requests: PageRequests;

beforeAll(async () => {
  server = await startTestServer('postgres');
  await seedWithDemo(server);
  const t0 = Date.now() - 3_600_000;
  await seedOneCallServers(server, 55, t0);
  await server.catchUp();
  browser = await launchChromium();
  // axe is injected as an inline script, which the pages' content-security policy rightly refuses: this context
  // bypasses it.
  const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1360, height: 900 } });
  context.setDefaultTimeout(15_000);
  await context.grantPermissions(['clipboard-read', 'clipboard-write']); // a snippet's Copy
  page = await context.newPage();
  requests = requestsOf(page);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function api<T>(path: string): Promise<T> {
  const response = await fetch(`${server.url}/api/v1/${path}`, {
    headers: { authorization: `Bearer ${server.readKey}` },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

/** The view is drawn: its heading, no loading state, and no request left (the filter bar's lists, a view's parts). */
async function settle(heading: string | RegExp): Promise<void> {
  await page.getByRole('heading', { name: heading, level: 1 }).first().waitFor();
  await page.locator('.state-loading').first().waitFor({ state: 'detached' });
  await requests.settled();
}

/** The sign-in form at `path`, no key kept. */
async function signedOut(path = '/'): Promise<void> {
  await page.goto(`${server.url}${path}`);
  await page.evaluate(() => sessionStorage.clear());
  await page.reload();
  await page.getByLabel('Read key').waitFor();
}

/** Signed in with the read key, as the sign-in form leaves it: the key in the tab's session storage. */
async function signedIn(path: string): Promise<void> {
  await page.goto(`${server.url}${path}`);
  await page.evaluate((key) => sessionStorage.setItem('errata.readKey', key), server.readKey);
  await page.reload();
}

async function signIn(key = server.readKey): Promise<void> {
  await signedOut();
  await page.getByLabel('Read key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** What has focus, as `tag#id text`. */
const focused = () =>
  page.evaluate(() => {
    const element = document.activeElement;
    if (element === null || element === document.body) return 'body';
    return `${element.tagName.toLowerCase()}#${element.id} ${element.textContent?.trim().slice(0, 40)}`;
  });

/**
 * The focus ring of what has focus: its outline, that outline's contrast against the page, and whether a box around
 * it that clips what overflows (`overflow: hidden`, a scrolling box) cuts it off.
 */
const ring = async () => {
  const style = await page.evaluate(() => {
    const element = document.activeElement!;
    const { outlineStyle, outlineWidth, outlineColor, outlineOffset } = getComputedStyle(element);
    const reach = parseFloat(outlineWidth) + parseFloat(outlineOffset);
    const { left, top, right, bottom } = element.getBoundingClientRect();
    let clipped = false;
    for (let box = element.parentElement; box !== null && box !== document.body; box = box.parentElement) {
      if (getComputedStyle(box).overflow === 'visible') continue;
      const edge = box.getBoundingClientRect();
      clipped ||=
        left - reach < edge.left ||
        top - reach < edge.top ||
        right + reach > edge.right ||
        bottom + reach > edge.bottom;
    }
    return {
      outlineStyle,
      outlineWidth,
      outlineColor,
      clipped,
      page: getComputedStyle(document.body).backgroundColor,
    };
  });
  return {
    style: style.outlineStyle,
    width: parseFloat(style.outlineWidth),
    contrast: contrastRatio(style.outlineColor, style.page),
    clipped: style.clipped,
  };
};

/**
 * Tabs from the top of the page to its end (where focus leaves the page, or comes round to the skip link again), and
 * says where it stopped; fails where a stop's focus ring does not show (not solid, thinner than 2 px, less than 3:1
 * against the page, or cut off).
 */
async function tabThrough(): Promise<string[]> {
  const stops: string[] = [];
  const hidden: string[] = [];
  for (let i = 0; i < 100; i++) {
    await page.keyboard.press('Tab');
    const stop = await focused();
    if (stop === 'body' || (i > 0 && stop === stops[0])) break;
    stops.push(stop);
    const { style, width, contrast, clipped } = await ring();
    if (style !== 'solid' || width < 2 || contrast < 3 || clipped)
      hidden.push(`${stop}: ${style} ${width}px, ${contrast.toFixed(1)}:1${clipped ? ', cut off' : ''}`);
  }
  expect(hidden, `focus rings that do not show on ${page.url()}`).toEqual([]);
  return stops;
}

it('axe: no serious or critical violation on any view, at desktop and phone widths, light and dark', async () => {
  const failures: string[] = [];
  // Serious and critical violations; and those axe could not decide (a label on an element that may not have one),
  // but for colour contrast, which it cannot compute over a decorative glyph.
  const audit = async (view: string, rules?: readonly string[]) => {
    const found = await axeFindings(page, rules);
    const scheme = await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches);
    if (found.length > 0)
      failures.push(
        `${page.viewportSize()!.width}px ${scheme ? 'dark' : 'light'} ${view}: ${found.join('; ')}`,
      );
  };
  /** Another view in place, as the back button does: the page is not loaded again, and axe stays in it. */
  const open = (path: string) =>
    page.evaluate((to) => {
      history.pushState(null, '', to);
      dispatchEvent(new PopStateEvent('popstate'));
    }, path);

  await signedOut('/retry-waste');
  await audit('sign-in');
  await page.getByLabel('Read key').fill('not-a-key');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'does not know this key' }).waitFor();
  await audit('sign-in, key refused');
  await page.getByLabel('Read key').fill(server.readKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await settle('Retry waste');

  const { findings } = await api<{ findings: { id: string }[] }>('findings');
  const { groups } = await api<{ groups: { samples: { traceId: string; spanId: string }[] }[] }>(
    'reports/retry-waste',
  );
  const wasted = groups.flatMap((g) => g.samples)[0]!;
  const views: [path: string, heading: string | RegExp, then?: () => Promise<void>][] = [
    ['/', 'Overview'],
    [
      '/?chart-figures',
      'Overview',
      async () => {
        for (const summary of await page.locator('.chart-figures summary').all()) await summary.click();
      },
    ],
    ['/retry-waste', 'Retry waste'],
    ['/retry-waste?groupBy=server', 'Retry waste'],
    ['/misclassified', 'Misclassified results'],
    ['/escalations', 'Escalations'],
    ['/subagents', 'Subagent coverage'],
    ['/servers', 'Servers'],
    ['/servers?offset=50', 'Servers'],
    ['/findings', 'Findings'],
    [`/findings/${findings[0]!.id}`, /: /],
    [`/traces/${wasted.traceId}?span=${wasted.spanId}&back=/retry-waste`, /^Run timeline/],
    [
      '/escalations?custom-range',
      'Escalations',
      async () => {
        await page.getByLabel('Time range', { exact: true }).selectOption('custom');
        await page.getByLabel('From', { exact: true }).fill('2026-01-02T00:00');
        await page.getByLabel('To', { exact: true }).fill('2026-01-01T00:00');
        await page.locator('#filter-custom-problem').waitFor();
      },
    ],
    ['/escalations?server=no-such-server', 'Escalations'],
    ['/?from=2026-11-31', 'Overview'],
    ['/findings/0123456789abcdef0123', 'Finding'],
    ['/nowhere', 'Page not found'],
  ];
  try {
    // The dark theme changes colours alone: its pass runs axe's colour rules.
    const colourRules = ['color-contrast', 'link-in-text-block'];
    for (const [width, scheme, rules] of [
      [1360, 'light', undefined],
      [390, 'light', undefined],
      [1360, 'dark', colourRules],
    ] as const) {
      await page.setViewportSize({ width, height: 900 });
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(`${server.url}/`);
      for (const [path, heading, then] of views) {
        await open(path);
        await settle(heading);
        await then?.();
        await audit(path, rules);
      }
      // Errata unreachable: the view's error and the filter bar's lists that failed.
      await page.route('**/api/v1/**', (route) => route.abort('connectionrefused'));
      await page.goto(`${server.url}/escalations`);
      await page.getByRole('alert').waitFor();
      await page.locator('[data-lists-failed]').waitFor();
      await audit('/escalations, Errata unreachable', rules);
      await page.unroute('**/api/v1/**');
    }

    // A project that has never received a call: the snippets to copy.
    const empty = await server.app.get(ProjectRepository).ensureProject('dashboard-axe-empty');
    const { key } = await server.app.get(ApiKeyService).create(empty.id, 'read', 'cli');
    for (const width of [1360, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await signIn(key);
      await page.getByRole('heading', { name: 'No tool calls yet' }).waitFor();
      await audit('/ without data');
    }
  } finally {
    await page.setViewportSize({ width: 1360, height: 900 });
    await page.emulateMedia({ colorScheme: 'light' });
  }
  expect(failures, `serious or critical axe violations:\n${failures.join('\n')}`).toEqual([]);
}, 120_000);

it('keyboard: signing in keeps focus on the button while the key is checked, and puts it on the content after', async () => {
  await signedOut();
  expect(await page.title()).toBe('Sign in · Errata');
  expect(await focused()).toMatch(/^input#read-key/);
  await page.keyboard.type('not-a-key');
  await page.keyboard.press('Tab');
  expect(await focused()).toMatch(/^button# Sign in/);
  await page.keyboard.press('Enter');
  await page.getByRole('alert').filter({ hasText: 'does not know this key' }).waitFor();
  expect(await focused()).toMatch(/^button# Sign in/); // not the page's body: no Tab from the top again

  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Control+A');
  await page.keyboard.type(server.readKey);
  await page.keyboard.press('Tab');
  await page.keyboard.press('Space');
  await settle('Overview');
  expect(await focused()).toMatch(/^main#main/);
});

it('keyboard: skip link, views, filters and the way to a call on its run timeline, each with a ring that shows', async () => {
  await signedIn('/retry-waste');
  await settle('Retry waste');
  await page.keyboard.press('Tab');
  expect(await focused()).toBe('a# Skip to content');
  expect(
    await page.locator('.skip-link').evaluate((link) => link.getBoundingClientRect().left),
  ).toBeGreaterThan(0);
  await page.keyboard.press('Enter');
  expect(await focused()).toMatch(/^main#main/);

  // From the top: the brand, the views, Sign out, the filter bar, then the view; every stop shows its ring
  await page.goto(`${server.url}/retry-waste`);
  await settle('Retry waste');
  const stops = await tabThrough();
  expect(stops.slice(0, 13).map((stop) => stop.replace(/ .*/, ''))).toEqual([
    'a#', // skip link
    'a#', // brand
    ...Array<string>(7).fill('a#'), // views
    'button#', // sign out
    'select#filter-range',
    'input#filter-server',
    'input#filter-tool',
  ]);
  expect(stops.slice(2, 9).map((stop) => stop.replace(/^a# /, ''))).toEqual([
    'Overview',
    'Retry waste',
    'Misclassified',
    'Escalations',
    'Subagent coverage',
    'Servers',
    'Findings',
  ]);

  // A sample's link, from the keyboard: the timeline opens with focus on that call, its ring showing
  const { groups } = await api<{
    groups: { samples: { traceId: string; spanId: string }[] }[];
  }>('reports/retry-waste');
  const wasted = groups.flatMap((g) => g.samples)[0]!;
  await page.locator(`[data-sample="${wasted.spanId}"]`).focus();
  await page.keyboard.press('Enter');
  await settle(/^Run timeline/);
  await page.waitForFunction((id) => document.activeElement?.id === id, `span-${wasted.spanId}`);
  expect(await page.title()).toBe('Run timeline · Errata');
  const opened = await ring();
  expect(opened.width).toBeGreaterThanOrEqual(2);
  expect(opened.clipped).toBe(false);
  expect(opened.contrast).toBeGreaterThanOrEqual(3);

  // Its "Retry of …" link puts focus on the call retried
  await page.keyboard.press('Tab');
  const retried = await page.evaluate(() => document.activeElement?.getAttribute('href'));
  expect(retried).toMatch(/^#span-/);
  await page.keyboard.press('Enter');
  expect(await page.evaluate(() => `#${document.activeElement?.id}`)).toBe(retried);

  // A finding: its links, its Copy buttons, the snippet that scrolls sideways
  const { findings } = await api<{ findings: { id: string }[] }>('findings');
  await page.goto(`${server.url}/findings/${findings[0]!.id}`);
  await settle(/: /);
  expect(await page.title()).toBe('Finding · Errata');
  const findingStops = await tabThrough();
  expect(findingStops.filter((stop) => stop.startsWith('button#')).length).toBeGreaterThan(0); // Copy
  expect(findingStops.filter((stop) => stop.startsWith('pre#')).length).toBeGreaterThan(0); // scrolls sideways
  // Copy says it worked to a screen reader too (its name stays "Copy: …")
  const copy = page.getByRole('button', { name: /^Copy: Handler/ });
  await copy.focus();
  await page.keyboard.press('Enter');
  await page
    .getByRole('status')
    .filter({ hasText: /^Copied: Handler/ })
    .waitFor();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toContain('registerTool');

  // Another view from the keyboard: focus on its content, as a page load would start at the top
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Servers' }).focus();
  await page.keyboard.press('Enter');
  await settle('Servers');
  expect(await focused()).toMatch(/^main#main/);
});

it('keyboard: Try again and Load them again put focus on what came back, or on themselves when it failed again', async () => {
  let down = true;
  // Refused after a moment: the loading state shows in between.
  await page.route('**/api/v1/**', async (route) => {
    if (!down) return route.continue();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await route.abort('connectionrefused');
  });
  try {
    await signedIn('/escalations');
    const alert = page.getByRole('alert');
    await alert.getByRole('button', { name: 'Try again' }).focus();
    await page.keyboard.press('Enter');
    const loading = page.getByRole('status').filter({ hasText: 'Loading escalations' });
    await loading.waitFor();
    // A live region marked busy is not read out until it is not: the loading message would never be heard.
    expect(await loading.getAttribute('aria-busy')).toBeNull();
    expect(await focused()).toMatch(/^main#main/); // while it loads
    await alert.waitFor();
    await page.waitForFunction(() => document.activeElement?.textContent === 'Try again');
    down = false;
    await page.keyboard.press('Space');
    await settle('Escalations');
    await page.locator('[data-stat="escalations"]').waitFor();
    expect(await focused()).toMatch(/^main#main/);
  } finally {
    await page.unroute('**/api/v1/**');
  }

  let listsDown = true;
  await page.route('**/api/v1/names?*', (route) =>
    listsDown ? route.abort('connectionrefused') : route.continue(),
  );
  try {
    await page.goto(`${server.url}/escalations`);
    const failed = page.locator('[data-lists-failed]');
    await failed.getByRole('button', { name: 'Load them again' }).focus();
    listsDown = false;
    await page.keyboard.press('Enter');
    await failed.waitFor({ state: 'detached' });
    expect(await focused()).toMatch(/^input#filter-server/);
  } finally {
    await page.unroute('**/api/v1/names?*');
  }
});

it('keyboard: the pager keeps focus on Next at the last page, and on Previous back at the first', async () => {
  await signedIn('/servers');
  await settle('Servers');
  const pager = page.getByRole('navigation', { name: 'Pages of servers' });
  await pager.getByRole('button', { name: 'Next' }).focus();
  await page.keyboard.press('Enter');
  await pager.locator('[data-page-range]', { hasText: /^51–/ }).waitFor();
  await settle('Servers');
  expect(await focused()).toBe('button# Next');
  expect(await pager.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
  await page.keyboard.press('Enter'); // no page that way: nothing happens
  expect(new URL(page.url()).searchParams.get('offset')).toBe('50');

  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Enter');
  await pager.locator('[data-page-range]', { hasText: /^1–50 / }).waitFor();
  await settle('Servers');
  expect(await focused()).toBe('button# Previous');
  expect(await pager.getByRole('button', { name: 'Previous' }).isDisabled()).toBe(true);
});

it('by hand: each chart has its figures as a table, focus stays on the control a view was redrawn by, the focus ring shows, the overview reflows at 320 px', async () => {
  // Each chart's figures, as a table a screen reader reads and anyone can open, equal what it plots
  await signedIn('/');
  await settle('Overview');
  for (const figure of await page.locator('figure.chart').all()) {
    const plotted = JSON.parse((await figure.getAttribute('data-series'))!) as Record<
      string,
      (number | null)[]
    >;
    const x = JSON.parse((await figure.getAttribute('data-x'))!) as string[];
    await figure.locator('summary').click();
    const table = figure.locator('.chart-figures table');
    await table.waitFor();
    expect(await table.locator('thead th').allTextContents()).toEqual([
      expect.any(String),
      ...Object.keys(plotted),
    ]);
    const cells = await table
      .locator('tbody tr')
      .evaluateAll((rows) =>
        rows.map((row) => Array.from(row.querySelectorAll('td')).map((td) => td.getAttribute('data-value'))),
      );
    expect(cells.length).toBe(x.length);
    const columns = Object.values(plotted);
    expect(cells).toEqual(x.map((_, i) => columns.map((values) => String(values[i] ?? ''))));
  }

  // A filter changed from the keyboard, or a grouping: the view is drawn anew, and focus stays on that control
  await page.goto(`${server.url}/retry-waste`);
  await settle('Retry waste');
  await page.getByRole('heading', { name: 'By category' }).waitFor();
  const active = () =>
    page.evaluate(() => {
      const element = document.activeElement;
      return element === null
        ? 'none'
        : `${element.tagName.toLowerCase()}#${element.id} ${element.textContent}`;
    });
  await page.getByLabel('Time range', { exact: true }).focus();
  await page.keyboard.press('ArrowDown');
  await page.waitForURL(/range=7d/);
  await page.getByRole('heading', { name: 'By category' }).waitFor();
  await page.waitForLoadState('networkidle');
  expect(await active()).toMatch(/^select#filter-range /);
  await page.getByRole('group', { name: 'Group retries by' }).getByRole('button', { name: 'server' }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'By server' }).waitFor();
  await page.waitForLoadState('networkidle');
  expect(await active()).toBe('button# server');
  expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-pressed'))).toBe('true');

  // The focus ring: 3:1 at least against the page and the cards, in each theme
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    const [ring, pageBackground, cardBackground] = await page.evaluate(() => [
      getComputedStyle(document.activeElement!).outlineColor,
      getComputedStyle(document.body).backgroundColor,
      getComputedStyle(document.querySelector('.stat')!).backgroundColor,
    ]);
    const ratios = [contrastRatio(ring!, pageBackground!), contrastRatio(ring!, cardBackground!)];
    for (const ratio of ratios) expect(ratio, scheme).toBeGreaterThanOrEqual(3);
  }
  await page.emulateMedia({ colorScheme: 'light' });

  // 320 CSS px (a 1280 px window at 400%): the overview's cards fit, nothing scrolls sideways
  await page.setViewportSize({ width: 320, height: 700 });
  try {
    await page.goto(`${server.url}/`);
    await settle('Overview');
    await page.locator('[data-stat="calls"]').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(320);
  } finally {
    await page.setViewportSize({ width: 1360, height: 900 });
  }
});

it("text fields' and selects' edges are 3:1 against the card they sit on, in each theme", async () => {
  try {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await signedIn('/findings');
      await settle('Findings');
      const edges = await page.evaluate(() =>
        ['#filter-range', '#filter-rule'].map((selector) => {
          const control = document.querySelector(selector)!;
          const card = control.closest('.filters') ?? document.body;
          return [selector, getComputedStyle(control).borderTopColor, getComputedStyle(card).backgroundColor];
        }),
      );
      for (const [selector, edge, behind] of edges)
        expect(contrastRatio(edge!, behind!), `${scheme} ${selector}`).toBeGreaterThanOrEqual(3);
    }
  } finally {
    await page.emulateMedia({ colorScheme: 'light' });
  }
});
