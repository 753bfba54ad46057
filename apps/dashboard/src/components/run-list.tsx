import type { TimelineRun } from '@errata/domain';
import { TIMELINE_RUNS_PAGE } from '@errata/domain/timeline-page';
import { useEffect, useRef } from 'preact/hooks';
import { counted, formatCount } from '../format';
import { withQuery } from '../route';
import { Link } from './link';
import { Name } from './name';

export const runLabel = (run: TimelineRun): string =>
  run.agentName ??
  run.agentId ??
  (run.runId.startsWith('trace:') ? 'Trace without an agent span' : run.runId);

/** The runs in coordinator → subagent order, each with its depth (a run whose parent is not listed starts a tree). */
export function runTree(runs: readonly TimelineRun[]): { run: TimelineRun; depth: number }[] {
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

/** The stretch of a trace's runs the list shows: the API lists a bounded stretch of them at a time. */
export interface RunStretch {
  readonly runs: readonly TimelineRun[];
  readonly runCount: number;
  readonly runOffset: number;
}

/**
 * A trace's runs as links to their timelines: the stretch the API answered with the run shown, and buttons that
 * read the stretch before or after it (`readRuns`) when the trace has more runs than one answer lists, so that every
 * run can be reached, by keyboard too: focus goes to the first run of a stretch read.
 */
export function RunList({
  stretch,
  selected,
  query,
  reading,
  readRuns,
}: {
  stretch: RunStretch;
  selected: string;
  query: URLSearchParams;
  /** The reading of another stretch: under way, failed (why), or neither (null). */
  reading: 'loading' | { failed: string } | null;
  readRuns: (runOffset: number) => void;
}) {
  const { runs, runCount, runOffset } = stretch;
  const list = useRef<HTMLUListElement>(null);
  const asked = useRef(false);
  useEffect(() => {
    if (!asked.current) return;
    asked.current = false;
    list.current?.querySelector('a')?.focus();
  }, [runOffset]);
  const read = (offset: number) => {
    asked.current = true;
    readRuns(offset);
  };
  const paged = runs.length < runCount;
  return (
    <nav aria-label="Agent runs in this trace" class="run-list">
      <ul ref={list}>
        {runTree(runs).map(({ run, depth }) => (
          <li key={run.runId} style={{ paddingLeft: `${depth * 1.25}rem` }}>
            <Link
              href={location.pathname + withQuery(query, { run: run.runId })}
              aria-current={run.runId === selected ? 'true' : undefined}
            >
              <span class={`tag tag-${run.isSubagent ? 'subagent' : 'coordinator'}`}>
                {run.role ?? (run.isSubagent ? 'subagent' : 'run')}
              </span>{' '}
              <Name>{runLabel(run)}</Name>
              <span class="muted"> · {counted(run.itemCount, 'item')}</span>
            </Link>
          </li>
        ))}
      </ul>
      {paged && (
        <p class="run-list-more">
          <span class="muted" role="status">
            {reading === 'loading'
              ? 'Loading runs…'
              : reading !== null
                ? `Could not read the runs: ${reading.failed}`
                : `Runs ${formatCount(runOffset + 1)}–${formatCount(runOffset + runs.length)} of ${formatCount(runCount)}`}
          </span>{' '}
          <button
            type="button"
            disabled={runOffset === 0 || reading === 'loading'}
            onClick={() => read(Math.max(0, runOffset - TIMELINE_RUNS_PAGE))}
          >
            Earlier runs
          </button>{' '}
          <button
            type="button"
            disabled={runOffset + runs.length >= runCount || reading === 'loading'}
            onClick={() => read(runOffset + runs.length)}
          >
            Later runs
          </button>
        </p>
      )}
    </nav>
  );
}
