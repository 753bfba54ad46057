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
  /** The call this one retries, how the retry is labelled and whether it was wasted. */
  readonly retry: { readonly of: string; readonly label: RetryLabel; readonly wasted: boolean } | null;
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

/** A call's own duration, to the nanosecond: fast calls take under a millisecond (report sums round to whole ms). */
const exactMs = (ns: bigint): number => Number(ns) / 1e6;

export function traceTimeline(
  traceId: string,
  facts: TraceFacts,
  derivation: TraceDerivation,
  runs: readonly RunRef[],
  storedOf: (spanId: string) => StoredCallDetails,
): TraceTimeline {
  // The facts may span other traces too (those hinted retries link to this one): only this trace's items show.
  const ofThisTrace = <F extends { key: string; traceId: string }>(all: readonly F[]) =>
    new Map(all.filter((fact) => fact.traceId === traceId).map((fact) => [fact.key, fact]));
  const callFacts = ofThisTrace(facts.calls);
  const escalationFacts = ofThisTrace(facts.escalations);
  const reportFacts = ofThisTrace(facts.reports);
  const shown = {
    calls: derivation.calls.filter((derived) => callFacts.has(derived.key)),
    escalations: derivation.escalations.filter((derived) => escalationFacts.has(derived.key)),
    reports: derivation.reports.filter((derived) => reportFacts.has(derived.key)),
  };

  const calls = shown.calls.map((derived): TimelineCall & { startNs: bigint } => {
    const call = callFacts.get(derived.key)!;
    const stored = storedOf(call.key);
    return {
      kind: 'call',
      spanId: call.key,
      runId: call.runId,
      startNs: call.startNs,
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
          : { of: derived.retry.of, label: derived.retry.label, wasted: derived.retry.wasted },
      misclassified: derived.misclassified,
      chainRecovered: derived.chainRecovered,
      escalationsCaused: derived.escalationsCaused,
      findings: [...new Set(derived.findings.map((finding) => finding.rule))],
      text: stored.text,
      arguments: stored.arguments,
    };
  });
  const escalations = shown.escalations.map((derived): TimelineEscalation & { startNs: bigint } => {
    const escalation = escalationFacts.get(derived.key)!;
    return {
      kind: 'escalation',
      spanId: escalation.key,
      runId: escalation.runId,
      startNs: escalation.startNs,
      startTime: isoFromNs(escalation.startNs),
      target: escalation.target,
      attributedTo: derived.call,
      category: derived.category,
      avoidable: derived.avoidable,
    };
  });
  const reports = shown.reports.map((derived): TimelineReport & { startNs: bigint } => {
    const report = reportFacts.get(derived.key)!;
    return {
      kind: 'report',
      spanId: report.key,
      runId: report.runId,
      startNs: report.startNs,
      startTime: isoFromNs(report.startNs),
      status: report.status,
      completed: report.completed,
      total: report.total,
      missingElements: report.status === 'complete' ? [] : missingElements(report),
      silentPartial: derived.silentPartial,
    };
  });
  const ordered = [...calls, ...escalations, ...reports].sort((a, b) =>
    a.startNs !== b.startNs ? (a.startNs < b.startNs ? -1 : 1) : a.spanId < b.spanId ? -1 : 1,
  );
  const items = ordered.map(({ startNs: _startNs, ...item }) => item as TimelineItem);

  const spanOfRun = new Map<string, { first: string; last: string }>();
  for (const item of items) {
    const last = item.kind === 'call' ? item.endTime : item.startTime;
    const span = spanOfRun.get(item.runId);
    if (span === undefined) spanOfRun.set(item.runId, { first: item.startTime, last });
    else if (last > span.last) span.last = last;
  }
  const known = new Map(runs.filter((run) => run.traceId === traceId).map((run) => [run.runId, run]));
  const runIds = new Set([...known.keys(), ...items.map((item) => item.runId)]);
  // Runs in the order of their first item (nanosecond order; the ISO times only have milliseconds).
  const firstItem = new Map<string, number>();
  items.forEach((item, index) => {
    if (!firstItem.has(item.runId)) firstItem.set(item.runId, index);
  });
  const rank = (run: TimelineRun) => firstItem.get(run.runId) ?? items.length;
  const timelineRuns = [...runIds]
    .map((runId): TimelineRun => {
      const run = known.get(runId);
      return {
        runId,
        agentName: run?.agentName ?? null,
        agentId: run?.agentId ?? null,
        role: run?.role ?? null,
        isSubagent: run?.isSubagent ?? false,
        parentRunId: run?.parentRunId ?? null,
        startTime: spanOfRun.get(runId)?.first ?? null,
        endTime: spanOfRun.get(runId)?.last ?? null,
      };
    })
    .sort((a, b) => rank(a) - rank(b) || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
  return { rulesVersion: RULES_VERSION, traceId, runs: timelineRuns, items };
}
