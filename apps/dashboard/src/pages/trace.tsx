import type {
  TimelineCall,
  TimelineItem,
  TimelineItemPlace,
  TimelineRun,
  TraceTimelinePage,
} from '@errata/domain';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, getJson } from '../api';
import { PageHeader } from '../components/figures';
import { Link } from '../components/link';
import { Await } from '../components/states';
import { counted, formatClock, formatCount, formatDuration, labelOf } from '../format';
import { canGoBackInApp, filterQuery, goBackToPreviousPage, traceOrigin, withQuery } from '../route';
import { useApi } from '../use-api';
import { Name } from '../components/name';
import { RunList, runLabel, runTree, type RunStretch } from '../components/run-list';

/**
 * The page a shared timeline link leads back to: the one that linked to it (`traceOrigin`); else the overview, the
 * dashboard's start, for a timeline that came from nowhere the app knows (no page is more likely than another).
 */
const backPage = (back: string | null): { path: string; label: string } =>
  traceOrigin(back) ?? { path: '/', label: 'Overview' };

/** How a call's category was decided, as the timeline says it (its evidence follows). */
function classificationLabel(source: TimelineCall['categorySource']): string {
  switch (source) {
    case 'declared':
      return 'Category declared by the server:';
    case 'code':
      return 'Category from an error code:';
    case 'text':
      return 'Category read from the error text:';
    case 'none':
      return 'Category unknown: neither a declaration, a code nor the text said it.';
    case null:
      return 'Failure signal in the result:';
  }
}

/** What the header and the run list show of the trace: from the run's first page, or a stretch of runs read. */
type TraceSummary = RunStretch & { readonly itemCount: number };

const summaryOf = ({ runs, runCount, runOffset, itemCount }: TraceTimelinePage): TraceSummary => ({
  runs,
  runCount,
  runOffset,
  itemCount,
});

/**
 * A trace's runs and one run's items. Opened on a run (its address names it: the run list's links do), one request
 * reads it: the run's first page, which lists the runs around it too. Opened on the trace, or on an item without its
 * run (an older link), a page of one item says which run to show first.
 */
export function TracePage({ traceId, query }: { traceId: string; query: URLSearchParams }) {
  const path = `/api/v1/traces/${encodeURIComponent(traceId)}`;
  const requested = query.get('run');
  const focused = query.get('span');
  const located = useApi<TraceTimelinePage>(requested === null && focused !== null ? path : null, {
    limit: '1',
    span: focused,
  });
  // The trace's first run, when neither the address nor its item says the run (or the item is gone).
  const missing = located.state === 'error' && located.error.status === 404;
  const first = useApi<TraceTimelinePage>(requested === null && (focused === null || missing) ? path : null, {
    limit: '1',
  });
  const opening = requested === null ? (focused !== null && !missing ? located : first) : null;
  const runId =
    requested ??
    (opening?.state !== 'ready'
      ? null
      : focused !== null && !missing
        ? (opening.data.items[0]?.runId ?? null)
        : (runTree(opening.data.runs)[0]?.run.runId ?? null));
  const [summary, setSummary] = useState<TraceSummary | null>(null);
  const [readingRuns, setReadingRuns] = useState<'loading' | { failed: string } | null>(null);
  const readRuns = (runOffset: number) => {
    setReadingRuns('loading');
    getJson<TraceTimelinePage>(path, { limit: '1', runOffset: String(runOffset) }).then(
      (page) => (setSummary(summaryOf(page)), setReadingRuns(null)),
      (error: unknown) =>
        setReadingRuns({ failed: error instanceof ApiError ? error.message : String(error) }),
    );
  };
  const onFirstPage = useCallback((page: TraceTimelinePage) => setSummary(summaryOf(page)), []);
  const [selected, setSelected] = useState<TimelineRun | null>(null);
  const shown =
    summary?.runs.find((run) => run.runId === runId) ?? (selected?.runId === runId ? selected : null);
  useEffect(() => {
    if (shown !== null && shown !== selected) setSelected(shown);
  }, [shown, selected]);
  const inApp = canGoBackInApp();
  const back = backPage(query.get('back'));
  const fallback = `${back.path}${filterQuery(query)}`;
  return (
    <section aria-labelledby="page-title">
      <p class="breadcrumb">
        {inApp ? (
          <a href={fallback} onClick={(e) => (e.preventDefault(), goBackToPreviousPage())}>
            ← Back
          </a>
        ) : (
          // Opened from a shared link: going back would leave the app.
          <Link href={fallback}>← {back.label}</Link>
        )}
      </p>
      {summary === null ? (
        <PageHeader title="Run timeline" />
      ) : (
        <PageHeader
          title={
            <>
              Run timeline: <Name>{shown !== null ? runLabel(shown) : traceId}</Name>
            </>
          }
        >
          Trace <code>{traceId}</code> · {counted(summary.runCount, 'agent run')} ·{' '}
          {formatCount(summary.itemCount)} calls, escalations and reports
        </PageHeader>
      )}
      {runId === null ? (
        <Await
          loaded={opening?.state === 'ready' ? { state: 'loading' } : (opening ?? { state: 'loading' })}
          what="the run timeline"
          retry={opening?.retry ?? (() => undefined)}
          notFoundHint={NOT_FOUND_HINT}
        >
          {() => null}
        </Await>
      ) : (
        <div class="trace-layout">
          {summary !== null ? (
            <RunList
              stretch={summary}
              selected={runId}
              query={query}
              reading={readingRuns}
              readRuns={readRuns}
            />
          ) : (
            <div />
          )}
          <RunItems
            key={`${runId} ${focused}`}
            path={path}
            traceId={traceId}
            runId={runId}
            focused={focused}
            query={query}
            onFirstPage={onFirstPage}
          />
        </div>
      )}
    </section>
  );
}

const NOT_FOUND_HINT = 'It may belong to another project, or its spans may not have reached Errata yet.';

/** Items a run's timeline reads and draws at first, and adds at each "Show the next" or "Show earlier items". */
const TIMELINE_PAGE = 200;

const spanOfHash = (hash: string): string | null =>
  hash.startsWith('#span-') ? hash.slice('#span-'.length) : null;

/** The items of a run read so far: one stretch of it, with where it lies and the cursors to read on. */
interface Stretch {
  readonly items: readonly TimelineItem[];
  readonly offset: number;
  readonly total: number;
  readonly before: string | null;
  readonly after: string | null;
}

const stretchOf = (page: TraceTimelinePage): Stretch => ({
  items: page.items,
  offset: page.page.offset,
  total: page.page.total,
  before: page.page.before,
  after: page.page.after,
});

/**
 * One run's items, read from the API a page (`TIMELINE_PAGE`) at a time: the first page, or the one holding the item
 * the page was opened on (`span`) or a "Retry of …" or "Caused by …" link leads to; then a page more at each "Show
 * the next" or "Show earlier items". A coordinator's run can hold thousands: reading and drawing them all at once
 * built tens of thousands of elements and a page some 150,000 px tall.
 */
function RunItems({
  path,
  traceId,
  runId,
  focused,
  query,
  onFirstPage,
}: {
  path: string;
  traceId: string;
  runId: string;
  focused: string | null;
  query: URLSearchParams;
  /** Told of each first page read: it lists the trace's runs around this one. */
  onFirstPage: (page: TraceTimelinePage) => void;
}) {
  // The item the stretch is read around: the one opened on, then a link's target not read yet.
  const [anchor, setAnchor] = useState<string | null>(() => spanOfHash(location.hash) ?? focused);
  const first = useApi<TraceTimelinePage>(path, {
    run: runId,
    limit: String(TIMELINE_PAGE),
    span: anchor,
  });
  const [stretch, setStretch] = useState<Stretch | null>(null);
  const [reading, setReading] = useState<'earlier' | 'next' | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  // The entry to put focus on once drawn: one of a page just added, or a link's target.
  const focusNext = useRef<string | null>(anchor);
  const opened = useRef(false);
  // An item the run does not have (a link's target gone with its trace, the span of another run kept in the
  // address when picking a run): the run from its start instead.
  const missing = first.state === 'error' && first.error.status === 404 && anchor !== null;
  useEffect(() => {
    if (missing) setAnchor(null);
  }, [missing]);
  const firstPage = first.state === 'ready' ? first.data : null;
  useEffect(() => {
    if (firstPage === null) return;
    setStretch(stretchOf(firstPage));
    onFirstPage(firstPage);
  }, [firstPage, onFirstPage]);
  useEffect(() => {
    // The browser's own jump to a link's target finds nothing when that target is not read yet.
    const follow = () => {
      const spanId = spanOfHash(location.hash);
      if (spanId === null) return;
      focusNext.current = spanId;
      if (document.getElementById(`span-${spanId}`) === null) setAnchor(spanId);
    };
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);
  useEffect(() => {
    if (stretch === null || focusNext.current === null) return;
    const entry = document.getElementById(`span-${focusNext.current}`);
    if (entry === null) return; // drawn by the render its state change asked for
    const wanted = focusNext.current;
    focusNext.current = null;
    if (!opened.current && wanted === focused) {
      opened.current = true;
      entry.scrollIntoView({ block: 'center' });
      // Opened from a sample's link, focus goes to that call, as the eye does, rather than the top of the content;
      // not when it is on a control here (a run picked in the list keeps it: focus.ts).
      const active = document.activeElement;
      if (active === null || active === document.body || active.id === 'main')
        entry.focus({ preventScroll: true });
      return;
    }
    entry.scrollIntoView({ block: 'nearest' });
    entry.focus({ preventScroll: true });
  });
  if (stretch === null || first.state !== 'ready') {
    return (
      <div class="run-items">
        <Await loaded={first} what="the run's items" retry={first.retry} notFoundHint={NOT_FOUND_HINT}>
          {() => null}
        </Await>
      </div>
    );
  }
  const readOn = (direction: 'earlier' | 'next') => {
    setReading(direction);
    setFailed(null);
    const cursor = direction === 'earlier' ? { before: stretch.before } : { after: stretch.after };
    getJson<TraceTimelinePage>(path, { run: runId, limit: String(TIMELINE_PAGE), ...cursor }).then(
      ({ items, page }) => {
        // Focus on the added item nearest those shown before: the first of the next, the last of the earlier.
        focusNext.current = (direction === 'next' ? items[0] : items.at(-1))?.spanId ?? null;
        setStretch((was) =>
          was === null
            ? was
            : direction === 'next'
              ? { ...was, items: [...was.items, ...items], total: page.total, after: page.after }
              : {
                  ...was,
                  items: [...items, ...was.items],
                  offset: page.offset,
                  total: page.total,
                  before: page.before,
                },
        );
        setReading(null);
      },
      (error: unknown) => {
        setFailed(error instanceof ApiError ? error.message : String(error));
        setReading(null);
      },
    );
  };
  const loaded = new Map(stretch.items.map((item) => [item.spanId, item]));
  const rest = stretch.total - stretch.offset - stretch.items.length;
  const next = Math.min(TIMELINE_PAGE, rest);
  // Where a link leads: within this stretch, an anchor; elsewhere in the run, the anchor all the same (read on
  // following it); another run or trace, its page at that item.
  const hrefOf = (spanId: string, at: TimelineItemPlace | null): string =>
    at === null || (at.traceId === traceId && at.runId === runId)
      ? `#span-${spanId}`
      : `/traces/${at.traceId}${withQuery(query, { run: at.runId, span: spanId })}`;
  return (
    <div class="run-items">
      {stretch.before !== null && (
        <p class="timeline-more timeline-earlier">
          <button type="button" disabled={reading !== null} onClick={() => readOn('earlier')}>
            Show earlier items ({formatCount(Math.min(TIMELINE_PAGE, stretch.offset))} of{' '}
            {formatCount(stretch.offset)} before these)
          </button>
        </p>
      )}
      <ol
        class="timeline"
        aria-label="Calls, retries, escalations and reports in start order"
        data-run={runId}
      >
        {stretch.items.map((item) => (
          <TimelineEntry
            key={item.spanId}
            item={item}
            focused={item.spanId === focused}
            loaded={loaded}
            hrefOf={hrefOf}
          />
        ))}
      </ol>
      {stretch.total === 0 && (
        // A coordinator whose work was all its subagents': their runs are in the run list.
        <p class="muted timeline-empty">
          This run made no calls, escalations or subagent reports of its own.
        </p>
      )}
      {stretch.total > TIMELINE_PAGE && (
        <p class="timeline-more">
          <span class="muted" role="status">
            {failed !== null
              ? `Could not read more items: ${failed}`
              : reading !== null
                ? 'Loading items…'
                : stretch.items.length < stretch.total
                  ? `${formatCount(stretch.items.length)} of ${formatCount(stretch.total)} items shown`
                  : `All ${formatCount(stretch.total)} items shown`}
          </span>
          {rest > 0 && stretch.after !== null && (
            <button type="button" disabled={reading !== null} onClick={() => readOn('next')}>
              Show the next {formatCount(next)} (of {formatCount(rest)} not shown)
            </button>
          )}
        </p>
      )}
    </div>
  );
}

function TimelineEntry({
  item,
  focused,
  loaded,
  hrefOf,
}: {
  item: TimelineItem;
  focused: boolean;
  loaded: Map<string, TimelineItem>;
  hrefOf: (spanId: string, at: TimelineItemPlace | null) => string;
}) {
  const anchor = (spanId: string, at: TimelineItemPlace | null) => {
    const target = loaded.get(spanId);
    const label = target?.kind === 'call' ? `${target.tool} at ${formatClock(target.startTime)}` : spanId;
    const href = hrefOf(spanId, at);
    // Another run's or trace's item is on a page of its own: an in-app link there.
    return href.startsWith('#') ? <a href={href}>{label}</a> : <Link href={href}>{label}</Link>;
  };
  const common = {
    id: `span-${item.spanId}`,
    'data-span': item.spanId,
    'data-kind': item.kind,
    class: `entry entry-${item.kind}${focused ? ' focused' : ''}`,
    'aria-current': focused ? ('true' as const) : undefined,
    // Each entry takes focus when a "Retry of …" or "Caused by …" link leads to it; the one the page was opened on is in
    // the tab order too.
    tabIndex: focused ? 0 : -1,
  };
  if (item.kind === 'call') {
    return (
      <li {...common} data-outcome={item.outcome}>
        <time dateTime={item.startTime}>{formatClock(item.startTime)}</time>
        <div class="entry-body">
          <p class="entry-title">
            <strong>
              <Name>{item.tool}</Name>
            </strong>{' '}
            <span class="muted">
              on <Name>{item.server ?? 'unknown server'}</Name>
            </span>{' '}
            <span class={`tag tag-outcome-${item.outcome}`}>{labelOf(item.outcome)}</span>
            {item.category && <span class="tag">{labelOf(item.category)}</span>}
            {item.misclassified && (
              <span class={`tag tag-${item.misclassified}`}>{labelOf(item.misclassified)}</span>
            )}
            <span class="muted"> · {formatDuration(item.durationMs)}</span>
          </p>
          {item.retry && (
            <p class={item.retry.wasted ? 'retry wasted' : 'retry'}>
              ↻ {item.retry.wasted ? 'Wasted retry' : 'Retry'} ({labelOf(item.retry.label)}) of{' '}
              {anchor(item.retry.of, item.retry.at)}
            </p>
          )}
          {(item.categorySource !== null || item.evidence !== null) && (
            <p class="muted" data-classification>
              {classificationLabel(item.categorySource)}
              {item.evidence !== null && item.categorySource !== 'none' && (
                <>
                  {' '}
                  <code>{item.evidence}</code>
                </>
              )}
            </p>
          )}
          {item.chainRecovered === false && !item.retry && <p class="warning">This chain never recovered.</p>}
          {item.findings.length > 0 && <p class="muted">Findings: {item.findings.map(labelOf).join(', ')}</p>}
          {item.escalationsCaused > 0 && (
            <p class="muted">Led to {counted(item.escalationsCaused, 'escalation')}</p>
          )}
          {item.arguments !== null && (
            <p class="call-arguments">
              <span class="muted">Arguments </span>
              <code data-arguments>{item.arguments}</code>
            </p>
          )}
          {item.text !== null && <q class="sample-text">{item.text}</q>}
        </div>
      </li>
    );
  }
  if (item.kind === 'escalation') {
    return (
      <li {...common}>
        <time dateTime={item.startTime}>{formatClock(item.startTime)}</time>
        <div class="entry-body">
          <p class="entry-title">
            <strong>Escalated to {item.target}</strong>
            {item.avoidable && <span class="tag tag-avoidable">avoidable: {labelOf(item.avoidable)}</span>}
          </p>
          <p class="muted">
            {item.attributedTo ? (
              <>
                Caused by {anchor(item.attributedTo, item.attributedAt)}
                {item.category ? ` (${labelOf(item.category)})` : ''}
              </>
            ) : (
              'Not attributed to a failed call'
            )}
          </p>
        </div>
      </li>
    );
  }
  return (
    <li {...common}>
      <time dateTime={item.startTime}>{formatClock(item.startTime)}</time>
      <div class="entry-body">
        <p class="entry-title">
          <strong>Subagent report: {item.status}</strong>
          {item.completed !== null && item.total !== null && (
            <span class="muted">
              {' '}
              · {formatCount(item.completed)} of {formatCount(item.total)} done
            </span>
          )}
          {item.silentPartial && <span class="tag tag-failureAsEmpty">silent partial</span>}
        </p>
        {item.missingElements.length > 0 && (
          <p class="warning">Missing: {item.missingElements.map(labelOf).join(', ')}</p>
        )}
      </div>
    </li>
  );
}
