/**
 * A trace's timeline a page at a time: `GET /api/v1/traces/:traceId` answers a bounded page with cursors to read on,
 * the page holding a given item, and where a linked item of another trace is; the dashboard reads a run's items a
 * page at a time and leads a "Retry of …" link to another trace there. Real PostgreSQL, OTLP ingest, chromium.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TIMELINE_RUNS_PAGE, type TimelineItem, type TraceTimelinePage } from '@errata/domain';
import { TraceTimelineService } from '../apps/server/src/services/trace-timeline.service';
import { AgentTrace, type ToolCallSpec } from './support/agent-spans';
import { launchChromium, signedInPage } from './support/browser';
import { statementsOf } from './support/statements';
import { defaultProjectId, sendSpans, startTestServer, type TestServer } from './support/server';

const t0 = Date.UTC(2026, 10, 30, 9, 0, 0);
const CALLS = 450;
/** The call of the long run that a call of another trace retries by hint: on the last page of 200. */
const RETRIED = 420;

/** A long run: calls two to a millisecond (so that order falls to the span id), each with arguments of its own. */
const longRun = (): ToolCallSpec[] =>
  Array.from({ length: CALLS }, (_, n) => ({
    tool: `step_${n % 7}`,
    startMs: t0 + Math.floor(n / 2),
    durationMs: 1,
    argsHash: n.toString(16).padStart(32, '0'),
    ...(n === RETRIED ? DENIED : {}),
    // A call that fails early in the run, retried blindly near its end
    ...(n === 10 || n === 440 ? { ...TIMED_OUT, isError: n === 10 } : {}),
  }));

const DENIED = {
  tool: 'refund',
  isError: true,
  category: 'business',
  text: 'Refund exceeds the 30 day window',
  argsHash: 'f'.repeat(32),
} as const;

const TIMED_OUT = {
  tool: 'cancel',
  category: 'transient',
  text: 'upstream timed out',
  argsHash: 'e'.repeat(32),
} as const;

/** Subagents of one coordinator in one trace: more runs than a page lists (`TIMELINE_RUNS_PAGE`). */
const SUBAGENTS = 250;
const RUNS = SUBAGENTS + 1;
const fanOut = () =>
  new AgentTrace().fanOut(
    'dispatch',
    t0 + 120_000,
    Array.from({ length: SUBAGENTS }, (_, n) => ({
      agentName: `sub-${n}`,
      calls: [{ tool: 'lookup', startMs: t0 + 120_000 + 2 * n + 1, durationMs: 1 }],
    })),
  );

const spanId = (span: ReadableSpan) => span.spanContext().spanId;
const startNs = (span: ReadableSpan) =>
  BigInt(span.startTime[0]) * 1_000_000_000n + BigInt(span.startTime[1]);

describe('trace timeline pages', () => {
  let server: TestServer;
  let long: ReadableSpan[];
  let calls: ReadableSpan[]; // the long run's calls in timeline order
  let retry: ReadableSpan;
  let retried: number; // its index in `calls` (420 or 421: two calls start in each millisecond)
  let fan: ReadableSpan[];
  const traceOf = (spans: ReadableSpan[]) => spans[0]!.spanContext().traceId;

  async function get(path: string): Promise<{ status: number; bytes: number; body: TraceTimelinePage }> {
    const response = await fetch(`${server.url}/api/v1/traces/${path}`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    const text = await response.text();
    return { status: response.status, bytes: Buffer.byteLength(text), body: JSON.parse(text) };
  }

  beforeAll(async () => {
    server = await startTestServer('postgres');
    long = new AgentTrace().run('support', t0, longRun());
    calls = long
      .filter((span) => span.name.startsWith('tools/call'))
      .sort((a, b) =>
        startNs(a) !== startNs(b) ? (startNs(a) < startNs(b) ? -1 : 1) : spanId(a) < spanId(b) ? -1 : 1,
      );
    retried = calls.findIndex((span) => span.name === 'tools/call refund');
    // Another trace (a chat runtime's next turn) retries the long run's failed call
    const next = new AgentTrace().run('chat', t0 + 60_000, [
      {
        ...DENIED,
        startMs: t0 + 60_000,
        durationMs: 5,
        extra: { 'errata.retry.of': spanId(calls[retried]!) },
      },
    ]);
    retry = next.find((span) => span.name === 'tools/call refund')!;
    expect(await sendSpans(server.url, server.ingestKey, long)).toBe(200);
    expect(await sendSpans(server.url, server.ingestKey, next)).toBe(200);
    fan = fanOut();
    expect(await sendSpans(server.url, server.ingestKey, fan)).toBe(200);
    await server.catchUp();
  }, 120_000);
  afterAll(() => server?.close());

  it('answers 200 items unless asked for fewer, with the total, and every run with its item count', async () => {
    const { status, body } = await get(traceOf(long));
    expect(status).toBe(200);
    expect(body.items).toHaveLength(200);
    expect(body.page).toEqual({
      limit: 200,
      run: null,
      total: CALLS,
      offset: 0,
      before: null,
      after: expect.any(String),
    });
    expect(body.runs.map((run) => [run.agentName, run.itemCount])).toEqual([['support', CALLS]]);
  });

  it('a walk by `after` reads every item once, in order, and back by `before` the same', async () => {
    const forward: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const { status, body }: { status: number; body: TraceTimelinePage } = await get(
        `${traceOf(long)}?limit=100${after === null ? '' : `&after=${after}`}`,
      );
      expect(status).toBe(200);
      expect(body.items.length).toBeLessThanOrEqual(100);
      expect(body.page.offset).toBe(forward.length);
      forward.push(...body.items.map((item) => item.spanId));
      ({ after } = body.page);
      pages += 1;
    } while (after !== null);
    expect(pages).toBe(5);
    expect(forward).toEqual(calls.map(spanId));

    const backward: string[] = [];
    let before: string | null = (await get(`${traceOf(long)}?limit=100&span=${spanId(calls.at(-1)!)}`)).body
      .page.before;
    backward.unshift(...calls.slice(400).map(spanId));
    while (before !== null) {
      const { body }: { body: TraceTimelinePage } = await get(`${traceOf(long)}?limit=100&before=${before}`);
      backward.unshift(...body.items.map((item) => item.spanId));
      ({ before } = body.page);
    }
    expect(backward).toEqual(calls.map(spanId));
  });

  it('answers the page holding an item, on the pages a walk from the start reaches it in', async () => {
    const deep = spanId(calls[333]!);
    const { status, body } = await get(`${traceOf(long)}?limit=100&span=${deep}`);
    expect(status).toBe(200);
    expect(body.page).toMatchObject({ offset: 300, total: CALLS });
    expect(body.items.map((item) => item.spanId)).toEqual(calls.slice(300, 400).map(spanId));
    // Of one run: the same, that run's items counted
    const runId = body.items[0]!.runId;
    const ofRun = await get(`${traceOf(long)}?limit=100&span=${deep}&run=${encodeURIComponent(runId)}`);
    expect(ofRun.body.page).toMatchObject({ run: runId, offset: 300, total: CALLS });
    // An item the trace does not have
    const missing = await get(`${traceOf(long)}?span=${'0'.repeat(16)}`);
    expect(missing.status).toBe(404);
  });

  it('says where a retried call of another trace is', async () => {
    const { body } = await get(traceOf([retry]));
    const [call] = body.items as Extract<TimelineItem, { kind: 'call' }>[];
    const place = (await get(`${traceOf(long)}?span=${spanId(calls[retried]!)}&limit=1`)).body.items[0]!;
    expect(call!.retry).toEqual({
      of: spanId(calls[retried]!),
      at: { traceId: traceOf(long), runId: place.runId },
      label: 'non_retryable',
      wasted: true,
    });
  });

  it(`lists ${TIMELINE_RUNS_PAGE} runs at most: those around the page's run, with runCount; runOffset reaches every run`, async () => {
    expect(RUNS).toBeGreaterThan(2 * TIMELINE_RUNS_PAGE);
    const { body } = await get(`${traceOf(fan)}?limit=1`);
    expect(body.runs).toHaveLength(TIMELINE_RUNS_PAGE);
    expect(body).toMatchObject({ runCount: RUNS, runOffset: 0, itemCount: SUBAGENTS });
    // A walk by runOffset lists every run once, in the order of their first item (the coordinator, without a call
    // of its own, last)
    const walked: string[] = [];
    const names: (string | null)[] = [];
    for (let offset = 0; offset < RUNS; offset += TIMELINE_RUNS_PAGE) {
      const stretch = (await get(`${traceOf(fan)}?limit=1&runOffset=${offset}`)).body;
      expect(stretch).toMatchObject({ runCount: RUNS, runOffset: offset });
      walked.push(...stretch.runs.map((run) => run.runId));
      names.push(...stretch.runs.map((run) => run.agentName));
    }
    expect(new Set(walked).size).toBe(RUNS);
    expect(names).toEqual([...Array.from({ length: SUBAGENTS }, (_, n) => `sub-${n}`), 'dispatch']);
    // A run's page lists the stretch holding it, as the walk met it; so does the page of one of its items
    const deep = walked[180]!;
    const ofRun = (await get(`${traceOf(fan)}?run=${encodeURIComponent(deep)}&limit=5`)).body;
    expect(ofRun).toMatchObject({ runOffset: 100, runCount: RUNS, itemCount: SUBAGENTS });
    expect(ofRun.runs.map((run) => run.runId)).toEqual(walked.slice(100, 200));
    expect(ofRun.page.total).toBe(1);
    const item = ofRun.items[0]!.spanId;
    expect((await get(`${traceOf(fan)}?span=${item}&limit=1`)).body.runOffset).toBe(100);
    // A trace of fewer runs lists them all, as before
    expect((await get(traceOf(long))).body).toMatchObject({ runCount: 1, runOffset: 0 });
    // Past the last run: none listed
    expect((await get(`${traceOf(fan)}?limit=1&runOffset=5000`)).body).toMatchObject({
      runs: [],
      runOffset: RUNS,
    });
  });

  it.each([
    ['runOffset=-1', '"runOffset" must be a whole number from 0 to'],
    ['runOffset=x', '"runOffset" must be a whole number from 0 to'],
    ['after=nonsense', '"after" must be a cursor a timeline page handed out'],
    ['before=12.XYZ', '"before" must be a cursor a timeline page handed out'],
    ['span=xyz', '"span" must be a span id'],
    [`after=1.${'a'.repeat(16)}&span=${'a'.repeat(16)}`, 'give one of them'],
    ['limit=1001', '"limit" must be a whole number from 1 to 1000'],
    ['limit=0', '"limit" must be a whole number from 1 to 1000'],
  ])('answers 400 to %s, saying what was wrong', async (query, message) => {
    const { status, body } = await get(`${traceOf(long)}?${query}`);
    expect(status).toBe(400);
    expect((body as unknown as { message: string }).message).toContain(message);
  });

  it("serialises a page's items only, and reads the stored arguments of the page's calls only", async () => {
    const whole = (await get(`${traceOf(long)}?limit=1000`)).bytes;
    const page = (await get(`${traceOf(long)}?limit=50`)).bytes;
    expect(page).toBeLessThan(whole / 5);
    const projectId = await defaultProjectId(server.db);
    const { sent } = await statementsOf(() =>
      server.app
        .get(TraceTimelineService)
        .timeline(projectId, traceOf(long), { limit: 50, run: null, position: { from: 'start' } }),
    );
    const argumentReads = sent.filter((statement) => /from "event"/i.test(statement.text));
    expect(argumentReads).toHaveLength(1);
    const spanIds = argumentReads[0]!.values.find(Array.isArray) as string[];
    expect(spanIds).toEqual(calls.slice(0, 50).map(spanId));
  });

  describe('the dashboard', () => {
    let browser: Browser;
    let page: Page;
    const asked: string[] = [];
    beforeAll(async () => {
      browser = await launchChromium();
      page = await signedInPage(browser, server.readKey);
      page.on('request', (request) => {
        if (request.url().includes('/api/v1/traces/')) asked.push(request.url());
      });
    });
    afterAll(() => browser?.close());
    const entries = () => page.locator('.timeline > li');
    const focusedId = () => page.evaluate(() => document.activeElement?.id ?? null);

    it('reads a run a page at a time: the first 200, then 200 more per "Show the next"', async () => {
      asked.length = 0;
      await page.goto(`${server.url}/traces/${traceOf(long)}`);
      await page.getByRole('heading', { name: /^Run timeline: support/, level: 1 }).waitFor();
      await entries().nth(199).waitFor();
      expect(await entries().count()).toBe(200);
      // No request read more than a page
      const limits = asked.map((url) => Number(new URL(url).searchParams.get('limit')));
      expect(Math.max(...limits)).toBeLessThanOrEqual(200);
      const more = page.getByRole('button', { name: /^Show the next/ });
      expect(await more.textContent()).toBe(`Show the next 200 (of ${CALLS - 200} not shown)`);
      await more.focus();
      await page.keyboard.press('Enter');
      await page.waitForFunction((id) => document.activeElement?.id === id, `span-${spanId(calls[200]!)}`);
      expect(await entries().count()).toBe(400);
      expect(asked.filter((url) => new URL(url).searchParams.has('after'))).toHaveLength(1);
    });

    it('opens a run named in the address with one request, which also lists the runs around it', async () => {
      // sub-180's run, as its one call says it
      const call = fan
        .filter((span) => span.name.startsWith('tools/call'))
        .sort((a, b) => (startNs(a) < startNs(b) ? -1 : 1))[180]!;
      const runId = (await get(`${traceOf(fan)}?span=${spanId(call)}&limit=1`)).body.items[0]!.runId;
      const run = { runId, agentName: 'sub-180' };
      asked.length = 0;
      await page.goto(`${server.url}/traces/${traceOf(fan)}?run=${encodeURIComponent(run.runId)}`);
      await page.getByRole('heading', { name: `Run timeline: ${run.agentName}`, level: 1 }).waitFor();
      await entries().first().waitFor();
      expect(asked).toHaveLength(1);
      expect(new URL(asked[0]!).searchParams.get('run')).toBe(run.runId);
      const list = page.getByRole('navigation', { name: 'Agent runs in this trace' });
      expect(await list.getByRole('link').count()).toBe(TIMELINE_RUNS_PAGE);
      expect(await list.locator('[aria-current="true"]').textContent()).toContain(run.agentName);
      expect(await list.getByRole('status').textContent()).toBe(`Runs 101–200 of ${RUNS}`);
      expect(await page.locator('.page-header .lede').textContent()).toContain(`${RUNS} agent runs`);
    });

    it('lets every run of a trace of many be reached from its run list, by keyboard', async () => {
      await page.goto(`${server.url}/traces/${traceOf(fan)}`);
      await page.getByRole('heading', { name: 'Run timeline: sub-0', level: 1 }).waitFor();
      const list = page.getByRole('navigation', { name: 'Agent runs in this trace' });
      const links = list.getByRole('link');
      const reached = new Set<string>();
      const collect = async () => {
        for (const href of await links.evaluateAll((all) => all.map((a) => a.getAttribute('href')!)))
          reached.add(new URL(href, server.url).searchParams.get('run')!);
      };
      await collect();
      expect(await list.getByRole('button', { name: 'Earlier runs' }).isDisabled()).toBe(true);
      const later = list.getByRole('button', { name: 'Later runs' });
      for (const shown of [`Runs 101–200 of ${RUNS}`, `Runs 201–${RUNS} of ${RUNS}`]) {
        await later.focus();
        await page.keyboard.press('Enter');
        await list.getByRole('status').filter({ hasText: shown }).waitFor();
        // Focus goes to the first run of the stretch read
        await page.waitForFunction(
          () =>
            document.activeElement?.closest('.run-list li') !== null &&
            document.activeElement?.tagName === 'A',
        );
        await collect();
      }
      expect(await later.isDisabled()).toBe(true);
      expect(reached.size).toBe(RUNS);
      // The coordinator, last in the API's order (no call of its own), heads its subagents of the stretch; it opens
      // from there with one request
      const coordinator = list.getByRole('link', { name: /dispatch/ });
      expect(await links.first().textContent()).toContain('dispatch');
      const last = new URL((await coordinator.getAttribute('href'))!, server.url).searchParams.get('run')!;
      asked.length = 0;
      await coordinator.focus();
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Run timeline: dispatch', level: 1 }).waitFor();
      // A run with no items: an empty list, and a line that says so
      await page.locator(`.timeline[data-run="${last}"]`).waitFor({ state: 'attached' });
      expect(await page.locator('.timeline-empty').textContent()).toBe(
        'This run made no calls, escalations or subagent reports of its own.',
      );
      expect(asked).toHaveLength(1);
    });

    it("opened on an item its run does not have (a run picked with another run's span in the address), shows the run from its start", async () => {
      const { body } = await get(`${traceOf(long)}?limit=1`);
      await page.goto(
        `${server.url}/traces/${traceOf(long)}?run=${encodeURIComponent(body.runs[0]!.runId)}&span=${spanId(retry)}`,
      );
      await entries().nth(199).waitFor();
      expect(await entries().first().getAttribute('data-span')).toBe(spanId(calls[0]!));
      expect(await page.getByRole('alert').count()).toBe(0);
    });

    it("leads a retry's link to the call of another trace it retries, opening that trace on the page holding it", async () => {
      await page.goto(`${server.url}/traces/${traceOf([retry])}`);
      const link = page.locator(`.timeline > li[data-span="${spanId(retry)}"] .retry a`);
      await link.waitFor();
      asked.length = 0;
      await link.focus();
      await page.keyboard.press('Enter');
      const target = `span-${spanId(calls[retried]!)}`;
      await page.waitForFunction((id) => document.activeElement?.id === id, target);
      expect(new URL(page.url()).pathname).toBe(`/traces/${traceOf(long)}`);
      expect(await page.locator('.timeline [aria-current="true"]').getAttribute('data-span')).toBe(
        spanId(calls[retried]!),
      );
      // Only the page holding it (items 400 to 449), not the 400 before it
      expect(await entries().count()).toBe(CALLS - 400);
      const earlier = page.getByRole('button', { name: /^Show earlier items/ });
      expect(await earlier.textContent()).toBe('Show earlier items (200 of 400 before these)');
      expect(await page.getByRole('button', { name: /^Show the next/ }).count()).toBe(0);
      await earlier.focus();
      await page.keyboard.press('Enter');
      expect(await focusedId()).not.toBe(null);
      await page.waitForFunction((id) => document.activeElement?.id === id, `span-${spanId(calls[399]!)}`);
      expect(await entries().count()).toBe(CALLS - 200);
      expect(await earlier.textContent()).toBe('Show earlier items (200 of 200 before these)');

      // A "Retry of …" link to an item of the run not read yet reads the page holding it and puts focus on it
      const [early, late] = calls.flatMap((span, n) => (span.name === 'tools/call cancel' ? [n] : []));
      await page.locator(`.timeline > li[data-span="${spanId(calls[late!]!)}"] .retry a`).click();
      await page.waitForFunction((id) => document.activeElement?.id === id, `span-${spanId(calls[early!]!)}`);
      expect(await entries().count()).toBe(200);
      expect(await page.locator('.timeline-more [role="status"]').textContent()).toBe(
        `200 of ${CALLS} items shown`,
      );
      // Reloaded with that target in the address: read and focused again
      expect(new URL(page.url()).hash).toBe(`#span-${spanId(calls[early!]!)}`);
      await page.reload();
      await page.waitForFunction((id) => document.activeElement?.id === id, `span-${spanId(calls[early!]!)}`);
      expect(await entries().count()).toBe(200);
    });
  });
});
