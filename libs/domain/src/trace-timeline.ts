/**
 * One trace as a timeline: its agent runs, and every call, escalation and subagent report in start order with
 * what the derivation decided about it (retry labels, misclassification, attribution, silent partials). What the
 * dashboard's run drill-down shows. Pure.
 */
import type { AgentRole } from './events';
import { isoFromNs } from './report-order';
import type { RunRef } from './runs';
import { RULES_VERSION, type CategorySource, type FailureCategory, type FindingRule } from './rules';
import type { RetryLabel } from './retries';
import { missingElements, type PropagationElement } from './subagent-report-elements';
import type { TraceDerivation, TraceFacts } from './trace-derivation';
import type { MisclassificationDirection } from './misclassified-report';
import type { AvoidableReason, EscalationFact } from './escalation-report';
import {
  byTimelineKey,
  pageOf,
  TIMELINE_RUNS_PAGE,
  type TimelinePageInfo,
  type TimelinePageRequest,
  type TimelinePosition,
} from './timeline-page';

export interface TimelineRun {
  readonly runId: string;
  readonly agentName: string | null;
  readonly agentId: string | null;
  readonly role: AgentRole | null;
  readonly isSubagent: boolean;
  readonly parentRunId: string | null;
  /** The first and last item of the run (null for a run with no calls, escalations or reports). */
  readonly startTime: string | null;
  readonly endTime: string | null;
  /** Its calls, escalations and reports in all (a page holds some of them). */
  readonly itemCount: number;
}

/** Where an item an entry links to is: in which trace (a hinted retry may name another) and which run. */
export interface TimelineItemPlace {
  readonly traceId: string;
  readonly runId: string;
}

interface TimelineItemBase {
  readonly spanId: string;
  readonly runId: string;
  readonly startTime: string;
}

export interface TimelineCall extends TimelineItemBase {
  readonly kind: 'call';
  readonly endTime: string;
  readonly durationMs: number;
  readonly server: string | null;
  readonly serverVersion: string | null;
  readonly tool: string;
  readonly outcome: string;
  readonly category: string | null;
  /** Where a failed call's category came from: what the server declared, a code, the text, or nothing (`unknown`). */
  readonly categorySource: CategorySource | null;
  /** What decided the classification: the declared key and value, a code, a text rule's id; a hidden failure's signal. */
  readonly evidence: string | null;
  /** The call this one retries (and where it is), how the retry is labelled and whether it was wasted. */
  readonly retry: {
    readonly of: string;
    readonly at: TimelineItemPlace | null;
    readonly label: RetryLabel;
    readonly wasted: boolean;
  } | null;
  readonly misclassified: MisclassificationDirection | null;
  /** Whether the chain the call belongs to recovered; null outside chains. */
  readonly chainRecovered: boolean | null;
  readonly escalationsCaused: number;
  readonly findings: readonly FindingRule[];
  /** The redacted result text stored for the call, when one was. */
  readonly text: string | null;
  /** The call's arguments, redacted and cut, when its project stores them (DOMAIN.md §6); else null. */
  readonly arguments: string | null;
}

/**
 * What was stored of a call beside its facts: how it was classified, the sample text, and the arguments where the
 * project keeps them.
 */
export interface StoredCallDetails {
  readonly categorySource: CategorySource | null;
  readonly evidence: string | null;
  readonly text: string | null;
  readonly arguments: string | null;
}

export interface TimelineEscalation extends TimelineItemBase {
  readonly kind: 'escalation';
  readonly target: EscalationFact['target'];
  /** The failed call it is attributed to; null when unattributed. */
  readonly attributedTo: string | null;
  /** Where that call is; null when unattributed. */
  readonly attributedAt: TimelineItemPlace | null;
  readonly category: FailureCategory | null;
  readonly avoidable: AvoidableReason | null;
}

export interface TimelineReport extends TimelineItemBase {
  readonly kind: 'report';
  readonly status: string;
  readonly completed: number | null;
  readonly total: number | null;
  readonly missingElements: readonly PropagationElement[];
  readonly silentPartial: boolean;
}

export type TimelineItem = TimelineCall | TimelineEscalation | TimelineReport;

export interface TraceTimeline {
  readonly rulesVersion: number;
  readonly traceId: string;
  readonly runs: readonly TimelineRun[];
  readonly items: readonly TimelineItem[];
}

/**
 * A page of a trace's timeline: the items the page holds, and a stretch of the runs (`TIMELINE_RUNS_PAGE` at most):
 * the one holding the page's run unless another is asked for (`runOffset`).
 */
export interface TraceTimelinePage extends TraceTimeline {
  readonly page: TimelinePageInfo;
  /** Runs of the trace in all; `runs` lists some of them when there are more than `TIMELINE_RUNS_PAGE`. */
  readonly runCount: number;
  /** The position of the first of `runs` among all of them (in the order of their first item), from 0. */
  readonly runOffset: number;
  /** Items of the trace in all, of every run (`page.total` counts those of `run` only, when given). */
  readonly itemCount: number;
}

/** A call's own duration, to the nanosecond: fast calls take under a millisecond (report sums round to whole ms). */
const exactMs = (ns: bigint): number => Number(ns) / 1e6;

/** The whole timeline: every item of the trace. What a page holds once it holds them all. */
export function traceTimeline(
  traceId: string,
  facts: TraceFacts,
  derivation: TraceDerivation,
  runs: readonly RunRef[],
  storedOf: (spanId: string) => StoredCallDetails,
): TraceTimeline {
  const whole = Number.MAX_SAFE_INTEGER;
  const page = traceTimelinePage(
    traceId,
    facts,
    derivation,
    runs,
    { limit: whole, run: null, position: { from: 'start' } },
    storedOf,
    whole,
  ) as TraceTimelinePage; // no run and no span asked for: nothing can be missing
  return { rulesVersion: page.rulesVersion, traceId, runs: page.runs, items: page.items };
}

/** A timeline page that cannot be answered: the trace has no such run, or no such item (in the run). */
export type TimelineMiss =
  { readonly missing: 'run' } | { readonly missing: 'span'; readonly spanId: string };

/**
 * One page of the timeline (`pageOf`), derived over the whole trace (retry labels and attributions need every
 * call): the page's items, and the stretch of runs (each with its item count) holding the page's run or the one
 * asked for (`runOffset`); `storedOf` is asked of the page's calls only. What is missing instead when the run asked
 * for is none of the trace's (an empty page would read as a run that did nothing), or the page of a span is asked for
 * and the trace (the run) has no such item.
 */
export function traceTimelinePage(
  traceId: string,
  facts: TraceFacts,
  derivation: TraceDerivation,
  runs: readonly RunRef[],
  request: TimelinePageRequest,
  storedOf: (spanId: string) => StoredCallDetails,
  /** Runs listed at most: the whole timeline lists them all. */
  runsPerPage = TIMELINE_RUNS_PAGE,
): TraceTimelinePage | TimelineMiss {
  const entries = timelineEntries(traceId, facts, derivation);
  const allRuns = timelineRuns(traceId, runs, entries);
  if (request.run !== null && !allRuns.some((run) => run.runId === request.run)) return { missing: 'run' };
  const paged = pageOf(entries, request);
  if (paged === null) {
    // pageOf misses only the page of a span.
    const { spanId } = request.position as Extract<TimelinePosition, { from: 'span' }>;
    return { missing: 'span', spanId };
  }
  const items = paged.items.map((entry) => entry.item(storedOf));
  const runOffset = runStretchStart(
    allRuns,
    request.runOffset ?? null,
    request.run ?? items[0]?.runId,
    runsPerPage,
  );
  return {
    rulesVersion: RULES_VERSION,
    traceId,
    runs: allRuns.slice(runOffset, runOffset + runsPerPage),
    items,
    page: paged.page,
    runCount: allRuns.length,
    runOffset,
    itemCount: entries.length,
  };
}

/**
 * Where the stretch of runs a page lists starts: where asked (`runOffset`), else at the stretch holding `current`,
 * aligned as a walk by whole stretches from the first run reaches it (so a client paging the run list by `runOffset`
 * meets the same stretches); the first stretch when the trace has no such run.
 */
function runStretchStart(
  runs: readonly TimelineRun[],
  runOffset: number | null,
  current: string | undefined,
  runsPerPage: number,
): number {
  if (runOffset !== null) return Math.min(runOffset, runs.length);
  const index = runs.findIndex((run) => run.runId === current);
  return index === -1 ? 0 : index - (index % runsPerPage);
}

/** An item of the timeline, in order, made whole only when a page holds it. */
interface TimelineEntry {
  readonly spanId: string;
  readonly runId: string;
  readonly startNs: bigint;
  /** The end of a call, the start of any other item. */
  readonly lastNs: bigint;
  readonly item: (storedOf: (spanId: string) => StoredCallDetails) => TimelineItem;
}

function timelineEntries(traceId: string, facts: TraceFacts, derivation: TraceDerivation): TimelineEntry[] {
  // The facts may span other traces too (those hinted retries link to this one): only this trace's items show.
  const ofThisTrace = <F extends { key: string; traceId: string }>(all: readonly F[]) =>
    new Map(all.filter((fact) => fact.traceId === traceId).map((fact) => [fact.key, fact]));
  const callFacts = ofThisTrace(facts.calls);
  const escalationFacts = ofThisTrace(facts.escalations);
  const reportFacts = ofThisTrace(facts.reports);
  // Where a linked item is: this trace's own first, as the derivation finds them.
  const places = new Map<string, TimelineItemPlace>();
  for (const fact of [...facts.calls].sort(
    (a, b) => (a.traceId === traceId ? 1 : 0) - (b.traceId === traceId ? 1 : 0),
  ))
    places.set(fact.key, { traceId: fact.traceId, runId: fact.runId });
  const placeOf = (spanId: string | null) => (spanId === null ? null : (places.get(spanId) ?? null));

  const calls = derivation.calls
    .filter((derived) => callFacts.has(derived.key))
    .map((derived): TimelineEntry => {
      const call = callFacts.get(derived.key)!;
      return {
        spanId: call.key,
        runId: call.runId,
        startNs: call.startNs,
        lastNs: call.endNs,
        item: (storedOf) => {
          const stored = storedOf(call.key);
          return {
            kind: 'call',
            spanId: call.key,
            runId: call.runId,
            startTime: isoFromNs(call.startNs),
            endTime: isoFromNs(call.endNs),
            durationMs: call.endNs > call.startNs ? exactMs(call.endNs - call.startNs) : 0,
            server: call.server,
            serverVersion: call.serverVersion,
            tool: call.tool,
            outcome: call.outcome,
            category: call.category,
            categorySource: stored.categorySource,
            evidence: stored.evidence,
            retry:
              derived.retry === null
                ? null
                : {
                    of: derived.retry.of,
                    at: placeOf(derived.retry.of),
                    label: derived.retry.label,
                    wasted: derived.retry.wasted,
                  },
            misclassified: derived.misclassified,
            chainRecovered: derived.chainRecovered,
            escalationsCaused: derived.escalationsCaused,
            findings: [...new Set(derived.findings.map((finding) => finding.rule))],
            text: stored.text,
            arguments: stored.arguments,
          };
        },
      };
    });
  const escalations = derivation.escalations
    .filter((derived) => escalationFacts.has(derived.key))
    .map((derived): TimelineEntry => {
      const escalation = escalationFacts.get(derived.key)!;
      return {
        spanId: escalation.key,
        runId: escalation.runId,
        startNs: escalation.startNs,
        lastNs: escalation.startNs,
        item: () => ({
          kind: 'escalation',
          spanId: escalation.key,
          runId: escalation.runId,
          startTime: isoFromNs(escalation.startNs),
          target: escalation.target,
          attributedTo: derived.call,
          attributedAt: placeOf(derived.call),
          category: derived.category,
          avoidable: derived.avoidable,
        }),
      };
    });
  const reports = derivation.reports
    .filter((derived) => reportFacts.has(derived.key))
    .map((derived): TimelineEntry => {
      const report = reportFacts.get(derived.key)!;
      return {
        spanId: report.key,
        runId: report.runId,
        startNs: report.startNs,
        lastNs: report.startNs,
        item: () => ({
          kind: 'report',
          spanId: report.key,
          runId: report.runId,
          startTime: isoFromNs(report.startNs),
          status: report.status,
          completed: report.completed,
          total: report.total,
          missingElements: report.status === 'complete' ? [] : missingElements(report),
          silentPartial: derived.silentPartial,
        }),
      };
    });
  return [...calls, ...escalations, ...reports].sort(byTimelineKey);
}

/** The trace's runs, in the order of their first item, each with its first and last instant and its item count. */
function timelineRuns(
  traceId: string,
  runs: readonly RunRef[],
  entries: readonly TimelineEntry[],
): TimelineRun[] {
  const spanOfRun = new Map<string, { first: bigint; last: bigint; rank: number; count: number }>();
  entries.forEach((entry, rank) => {
    const span = spanOfRun.get(entry.runId);
    if (span === undefined)
      spanOfRun.set(entry.runId, { first: entry.startNs, last: entry.lastNs, rank, count: 1 });
    else {
      if (entry.lastNs > span.last) span.last = entry.lastNs;
      span.count += 1;
    }
  });
  const known = new Map(runs.filter((run) => run.traceId === traceId).map((run) => [run.runId, run]));
  const runIds = new Set([...known.keys(), ...spanOfRun.keys()]);
  // Runs in the order of their first item (nanosecond order; the ISO times only have milliseconds).
  const rank = (run: TimelineRun) => spanOfRun.get(run.runId)?.rank ?? entries.length;
  return [...runIds]
    .map((runId): TimelineRun => {
      const run = known.get(runId);
      const span = spanOfRun.get(runId);
      return {
        runId,
        agentName: run?.agentName ?? null,
        agentId: run?.agentId ?? null,
        role: run?.role ?? null,
        isSubagent: run?.isSubagent ?? false,
        parentRunId: run?.parentRunId ?? null,
        startTime: span === undefined ? null : isoFromNs(span.first),
        endTime: span === undefined ? null : isoFromNs(span.last),
        itemCount: span?.count ?? 0,
      };
    })
    .sort((a, b) => rank(a) - rank(b) || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
}
