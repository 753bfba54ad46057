import type { TimelineCall, TimelineItem, TimelineRun, TraceTimeline } from '@errata/domain';
import { useEffect, useRef, useState } from 'preact/hooks';
import { PageHeader } from '../components/figures';
import { Link } from '../components/link';
import { Await } from '../components/states';
import { counted, formatClock, formatCount, formatDuration, labelOf } from '../format';
import { canGoBackInApp, filterQuery, goBackToPreviousPage, traceOrigin, withQuery } from '../route';
import { useApi } from '../use-api';
import { Name } from '../components/name';

const runLabel = (run: TimelineRun): string =>
  run.agentName ??
  run.agentId ??
  (run.runId.startsWith('trace:') ? 'Trace without an agent span' : run.runId);

/** The runs in coordinator → subagent order, each with its depth. */
function runTree(runs: readonly TimelineRun[]): { run: TimelineRun; depth: number }[] {
  const ids = new Set(runs.map((run) => run.runId));
  const children = new Map<string | null, TimelineRun[]>();
  for (const run of runs) {
    const parent = run.parentRunId !== null && ids.has(run.parentRunId) ? run.parentRunId : null;
    children.set(parent, [...(children.get(parent) ?? []), run]);
  }
  const ordered: { run: TimelineRun; depth: number }[] = [];
  const visit = (parent: string | null, depth: number) => {
    for (const run of children.get(parent) ?? []) {
      ordered.push({ run, depth });
      visit(run.runId, depth + 1);
    }
  };
  visit(null, 0);
  return ordered;
}

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

export function TracePage({ traceId, query }: { traceId: string; query: URLSearchParams }) {
  const timeline = useApi<TraceTimeline>(`/api/v1/traces/${encodeURIComponent(traceId)}`);
  const focused = query.get('span');
  const inApp = canGoBackInApp();
  const back = backPage(query.get('back'));
  const fallback = `${back.path}${filterQuery(query)}`;
  useEffect(() => {
    if (timeline.state !== 'ready' || focused === null) return;
    const entry = document.getElementById(`span-${focused}`);
    entry?.scrollIntoView({ block: 'center' });
    // Opened from a sample's link, focus goes to that call, as the eye does, rather than the top of the content; not
    // when it is on a control here (a run picked in the list keeps it: focus.ts).
    const active = document.activeElement;
    if (active === null || active === document.body || active.id === 'main')
      entry?.focus({ preventScroll: true });
  }, [timeline.state, focused]);
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
      {timeline.state !== 'ready' && <PageHeader title="Run timeline" />}
      <Await
        loaded={timeline}
        what="the run timeline"
        retry={timeline.retry}
        notFoundHint="It may belong to another project, or its spans may not have reached Errata yet."
      >
        {(timeline) => {
          const tree = runTree(timeline.runs);
          const requested = query.get('run');
          const selected =
            timeline.runs.find((run) => run.runId === requested) ??
            timeline.runs.find((run) =>
              timeline.items.some((item) => item.runId === run.runId && item.spanId === focused),
            ) ??
            tree[0]?.run;
          const items = timeline.items.filter((item) => item.runId === selected?.runId);
          const byId = new Map(timeline.items.map((item) => [item.spanId, item]));
          return (
            <>
              <PageHeader
                title={
                  <>
                    Run timeline: <Name>{selected ? runLabel(selected) : traceId}</Name>
                  </>
                }
              >
                Trace <code>{timeline.traceId}</code> · {counted(timeline.runs.length, 'agent run')} ·{' '}
                {formatCount(timeline.items.length)} calls, escalations and reports
              </PageHeader>
              <div class="trace-layout">
                <nav aria-label="Agent runs in this trace" class="run-list">
                  <ul>
                    {tree.map(({ run, depth }) => (
                      <li key={run.runId} style={{ paddingLeft: `${depth * 1.25}rem` }}>
                        <Link
                          href={location.pathname + withQuery(query, { run: run.runId })}
                          aria-current={run.runId === selected?.runId ? 'true' : undefined}
                        >
                          <span class={`tag tag-${run.isSubagent ? 'subagent' : 'coordinator'}`}>
                            {run.role ?? (run.isSubagent ? 'subagent' : 'run')}
                          </span>{' '}
                          <Name>{runLabel(run)}</Name>
                          <span class="muted">
                            {' '}
                            ·{' '}
                            {counted(
                              timeline.items.filter((item) => item.runId === run.runId).length,
                              'item',
                            )}
                          </span>
                        </Link>
                      </li>
                    ))}
                  </ul>
                </nav>
                <RunItems
                  key={selected?.runId}
                  runId={selected?.runId}
                  items={items}
                  focused={focused}
                  byId={byId}
                />
              </div>
            </>
          );
        }}
      </Await>
    </section>
  );
}

/** Items a run's timeline draws at first, and adds at each "Show the next": a coordinator's run can hold thousands. */
const TIMELINE_PAGE = 200;

const spanOfHash = (hash: string): string | null =>
  hash.startsWith('#span-') ? hash.slice('#span-'.length) : null;

/**
 * One run's items, the first `TIMELINE_PAGE` of them and then a page more at each "Show the next", and always up to and
 * including the one the page was opened on (`span`) and the one a "Retry of …" or "Caused by …" link leads to: drawing
 * thousands at once built tens of thousands of elements and a page some 150,000 px tall.
 */
function RunItems({
  runId,
  items,
  focused,
  byId,
}: {
  runId: string | undefined;
  items: readonly TimelineItem[];
  focused: string | null;
  byId: Map<string, TimelineItem>;
}) {
  const [shown, setShown] = useState(TIMELINE_PAGE);
  const [linked, setLinked] = useState<string | null>(null);
  // The entry to put focus on once drawn: the first of a page just added, or a link's target drawn only now.
  const focusNext = useRef<string | null>(null);
  const through = (spanId: string | null): number =>
    spanId === null ? 0 : items.findIndex((item) => item.spanId === spanId) + 1;
  const drawn = Math.max(shown, through(focused), through(linked));
  useEffect(() => {
    // The browser's own jump to a link's target finds nothing when that target is not drawn yet.
    const follow = () => {
      const spanId = spanOfHash(location.hash);
      if (spanId === null || document.getElementById(`span-${spanId}`) !== null) return;
      focusNext.current = spanId;
      setLinked(spanId);
    };
    window.addEventListener('hashchange', follow);
    // A page loaded with a link's target in its address (reloaded after following one) had no jump at all.
    const atLoad = spanOfHash(location.hash);
    if (atLoad !== null) {
      focusNext.current = atLoad;
      setLinked(atLoad);
    }
    return () => window.removeEventListener('hashchange', follow);
  }, []);
  useEffect(() => {
    if (focusNext.current === null) return;
    const entry = document.getElementById(`span-${focusNext.current}`);
    if (entry === null) return; // drawn by the render its state change asked for
    focusNext.current = null;
    entry.scrollIntoView({ block: 'nearest' });
    entry.focus({ preventScroll: true });
  });
  const rest = items.length - drawn;
  const next = Math.min(TIMELINE_PAGE, rest);
  const showNext = () => {
    focusNext.current = items[drawn]?.spanId ?? null;
    setShown(drawn + next);
  };
  return (
    <div class="run-items">
      <ol
        class="timeline"
        aria-label="Calls, retries, escalations and reports in start order"
        data-run={runId}
      >
        {items.slice(0, drawn).map((item) => (
          <TimelineEntry key={item.spanId} item={item} focused={item.spanId === focused} byId={byId} />
        ))}
      </ol>
      {items.length > TIMELINE_PAGE && (
        <p class="timeline-more">
          <span class="muted" role="status">
            {rest > 0
              ? `${formatCount(drawn)} of ${formatCount(items.length)} items shown`
              : `All ${formatCount(items.length)} items shown`}
          </span>
          {rest > 0 && (
            <button type="button" onClick={showNext}>
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
  byId,
}: {
  item: TimelineItem;
  focused: boolean;
  byId: Map<string, TimelineItem>;
}) {
  const anchor = (spanId: string) => {
    const target = byId.get(spanId);
    const label = target?.kind === 'call' ? `${target.tool} at ${formatClock(target.startTime)}` : spanId;
    return <a href={`#span-${spanId}`}>{label}</a>;
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
              {anchor(item.retry.of)}
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
                Caused by {anchor(item.attributedTo)}
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
