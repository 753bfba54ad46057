/**
 * What the reports need to know about each call, escalation and subagent report, decided once per trace at
 * projection time so that a report over a window only sums (DOMAIN.md §2–§4, §7).
 *
 * Everything a late span can change lives inside its trace: run resolution walks the trace's spans, retries and
 * escalation attribution stay within a run, and a coordinator's call reads the subagent runs it started. So the
 * projection re-derives the traces a batch touched, from all of their calls, and nothing else.
 */
import { FAILED_OUTCOMES } from './events';
import { attributeEscalations, type AvoidableReason, type EscalationFact } from './escalation-report';
import type { CallFinding } from './call-findings';
import type { FindingCall, FindingReportFact } from './findings-report';
import {
  subagentHiddenFailures,
  unrecoveredRuns,
  type MisclassificationDirection,
} from './misclassified-report';
import { analyzeRetries, compareCalls, isOkOrEmpty, type RetryCategory, type RetryLabel } from './retries';
import type { FailureCategory, FindingRule } from './rules';

/** Every call, escalation and subagent report of a set of whole traces, with their runs resolved. */
export interface TraceFacts {
  readonly calls: readonly FindingCall[];
  readonly escalations: readonly EscalationFact[];
  readonly reports: readonly FindingReportFact[];
  readonly subagentRuns: ReadonlySet<string>;
  /** Tool-call span id → the agent runs started under that call. */
  readonly delegatedRuns: ReadonlyMap<string, readonly string[]>;
  /** Agent run id → the run it is nested in (`RunRef.parentRunId`); runs nested in no other run are absent. */
  readonly parentRuns: ReadonlyMap<string, string>;
}

/** The retry a call is: the label, and the retried call's category, server and tool it is reported under. */
export interface DerivedRetry {
  /** The span id of the call retried. */
  readonly of: string;
  readonly label: RetryLabel;
  readonly wasted: boolean;
  readonly retriedCategory: RetryCategory;
  readonly retriedServer: string | null;
  readonly retriedTool: string;
  /** The retry's own duration (0 when its end precedes its start) and tokens: what a wasted retry cost. */
  readonly durationNs: bigint;
  readonly tokens: number | null;
}

export interface DerivedCall {
  readonly key: string;
  /** The category escalation rates count the call under: failed calls their category (`unknown` without). */
  readonly failureCategory: FailureCategory | null;
  readonly misclassified: MisclassificationDirection | null;
  /** A coordinator's call that came back fine over an unrecovered failure in a subagent run it started. */
  readonly hiddenSubagentFailure: boolean;
  /**
   * For a hidden subagent failure, the subagent run whose unrecovered failure the result claims success over: a
   * silent partial (DOMAIN.md §4, "reports or results"). Null when every such run's `complete` report counts already.
   */
  readonly silentPartialRun: string | null;
  readonly retry: DerivedRetry | null;
  /** On the first call of a chain that never recovered: the chain's category. */
  readonly unrecoveredChain: RetryCategory | null;
  /** Whether the chain the call belongs to recovered; null outside chains. */
  readonly chainRecovered: boolean | null;
  /**
   * Whether the chain recovered with a call of this call's own run (local absorption, DOMAIN.md §4): a failure
   * another run's call recovered, e.g. the coordinator's, was not absorbed where it happened. Null outside chains.
   */
  readonly chainRecoveredInOwnRun: boolean | null;
  readonly inSubagentRun: boolean;
  readonly retriesCaused: number;
  readonly wastedRetriesCaused: number;
  readonly wastedNsCaused: bigint;
  readonly escalationsCaused: number;
  /**
   * The call's own findings, plus the misclassification rules its flags or a hidden subagent failure imply, and a
   * declared non-retryability its same-arguments retry proved wrong (`RETRY_SUCCEEDED`).
   */
  readonly findings: readonly CallFinding[];
}

export interface DerivedEscalation {
  readonly key: string;
  /** The attributed call's span id, server and tool; null when unattributed. */
  readonly call: string | null;
  readonly server: string | null;
  readonly tool: string | null;
  readonly category: FailureCategory | null;
  readonly avoidable: AvoidableReason | null;
}

export interface DerivedReport {
  readonly key: string;
  /** Claims `complete` while a failure in its run, or in a run nested under it, was never recovered. */
  readonly silentPartial: boolean;
}

export interface TraceDerivation {
  readonly calls: readonly DerivedCall[];
  readonly escalations: readonly DerivedEscalation[];
  readonly reports: readonly DerivedReport[];
}

const isFailed = (call: FindingCall): boolean => FAILED_OUTCOMES.includes(call.outcome);

export const HIDDEN_SUBAGENT_FAILURE = 'failure:subagent_unrecovered';

/**
 * `retryable-mismatch` on the evidence of the trace (DOMAIN.md §7: "contradicts category or evidence"): a failure
 * its server declared not retryable whose retry, with the same arguments, came back ok or ok_empty. The same call
 * succeeding proves the declaration wrong. The converse (declared retryable, never recovered) is no evidence: an
 * outage can outlast any chain.
 */
export const RETRY_SUCCEEDED = 'declared_not_retryable:retry_succeeded';

export function deriveTraceFacts(
  facts: TraceFacts,
  options: { readonly windowMs?: number } = {},
): TraceDerivation {
  // Span ids are unique in a trace: a repeated key (a span re-sent with another start time) counts once.
  const { calls, viewOf } = withoutSecondViews(firstOfEachKey([...facts.calls].sort(compareCalls)));
  const delegatedRuns =
    viewOf.size === 0 ? facts.delegatedRuns : delegatedToKept(facts.delegatedRuns, viewOf);
  const escalations = firstOfEachKey([...facts.escalations].sort(compareStarts));
  const reports = firstOfEachKey([...facts.reports].sort(compareStarts));
  const analysis = analyzeRetries(calls, options);
  const { retries, chains } = analysis;
  const hidden = subagentHiddenFailures(calls, chains, delegatedRuns);
  // A hidden subagent failure is misclassified like any failure-as-empty call: an escalation after it is its own.
  const escalationCalls =
    hidden.size === 0
      ? calls
      : calls.map((call) => (hidden.has(call.key) ? { ...call, failureAsEmpty: true } : call));
  const attributions = attributeEscalations(escalationCalls, escalations, options, analysis);

  const retryOf = new Map(retries.map((link) => [link.key, link]));
  const caused = new Map<
    string,
    { retries: number; wasted: number; wastedNs: bigint; escalations: number }
  >();
  const causedBy = (key: string) => {
    let entry = caused.get(key);
    if (entry === undefined)
      caused.set(key, (entry = { retries: 0, wasted: 0, wastedNs: 0n, escalations: 0 }));
    return entry;
  };
  for (const link of retries) {
    const entry = causedBy(link.retryOf);
    entry.retries++;
    if (link.wasted) {
      entry.wasted++;
      entry.wastedNs += link.durationNs;
    }
  }
  for (const { call } of attributions) if (call !== null) causedBy(call).escalations++;
  const callByKey = new Map(calls.map((call) => [call.key, call]));
  const retriedUnchangedToSuccess = new Set(
    retries
      .filter((link) => {
        const retry = callByKey.get(link.key);
        return link.sameArgs === true && retry !== undefined && isOkOrEmpty(retry.outcome);
      })
      .map((link) => link.retryOf),
  );
  const chainOf = new Map<
    string,
    { recovered: boolean; recoveringRun: string | null; head: boolean; category: RetryCategory }
  >();
  for (const chain of chains) {
    // A recovered chain's last call is the one that recovered it (DOMAIN.md §2 chains).
    const last = chain.calls[chain.calls.length - 1];
    const recoveringRun = chain.recovered && last !== undefined ? (callByKey.get(last)?.runId ?? null) : null;
    for (const key of chain.calls) {
      chainOf.set(key, {
        recovered: chain.recovered,
        recoveringRun,
        head: key === chain.key,
        category: chain.category,
      });
    }
  }

  // A failure in a sub-subagent's run is inside the subagent run that started it (DOMAIN.md §4 silent partials).
  const holdingUnrecovered = withEnclosingRuns(unrecoveredRuns(calls, chains), facts.parentRuns);
  const derivedReports = reports.map((report): DerivedReport => ({
    key: report.key,
    silentPartial: report.status === 'complete' && holdingUnrecovered.has(report.runId),
  }));
  const silentReportRuns = new Set(
    reports.filter((_, i) => derivedReports[i]!.silentPartial).map((report) => report.runId),
  );
  // A run's hand-back claiming success is one silent partial, whether a report span, the call's result, or both say it.
  const silentResultRun = (callKey: string): string | null =>
    (delegatedRuns.get(callKey) ?? []).find(
      (run) => holdingUnrecovered.has(run) && !silentReportRuns.has(run),
    ) ?? null;

  const derivedCalls = calls.map((call): DerivedCall => {
    const link = retryOf.get(call.key);
    const chain = chainOf.get(call.key);
    const effects = caused.get(call.key);
    const hiddenSubagentFailure = hidden.has(call.key);
    const misclassified = call.emptyAsError
      ? 'emptyAsError'
      : call.failureAsEmpty || hiddenSubagentFailure
        ? 'failureAsEmpty'
        : null;
    const has = (rule: FindingRule) => call.findings.some((f) => f.rule === rule);
    // The misclassification rules follow the flags (and the subagent case), whatever the stored findings say; a
    // retryability the call's retry proved wrong needs the trace.
    const implied: CallFinding[] = [];
    if (misclassified === 'emptyAsError' && !has('empty-as-error'))
      implied.push({ rule: 'empty-as-error', evidence: call.evidence ?? 'empty' });
    if (misclassified === 'failureAsEmpty' && !has('failure-as-empty'))
      implied.push({
        rule: 'failure-as-empty',
        evidence: call.failureAsEmpty ? (call.evidence ?? 'failure') : HIDDEN_SUBAGENT_FAILURE,
      });
    if (
      call.declaredRetryable === false &&
      isFailed(call) &&
      retriedUnchangedToSuccess.has(call.key) &&
      !call.findings.some((f) => f.rule === 'retryable-mismatch' && f.evidence === RETRY_SUCCEEDED)
    )
      implied.push({ rule: 'retryable-mismatch', evidence: RETRY_SUCCEEDED });
    return {
      key: call.key,
      failureCategory: isFailed(call) ? (call.category ?? 'unknown') : null,
      misclassified,
      hiddenSubagentFailure,
      silentPartialRun: hiddenSubagentFailure ? silentResultRun(call.key) : null,
      retry:
        link === undefined
          ? null
          : {
              of: link.retryOf,
              label: link.label,
              wasted: link.wasted,
              retriedCategory: link.retriedCategory,
              retriedServer: link.server,
              retriedTool: link.tool,
              durationNs: link.durationNs,
              tokens: link.tokens,
            },
      unrecoveredChain: chain?.head === true && !chain.recovered ? chain.category : null,
      chainRecovered: chain?.recovered ?? null,
      chainRecoveredInOwnRun: chain === undefined ? null : chain.recoveringRun === call.runId,
      inSubagentRun: facts.subagentRuns.has(call.runId),
      retriesCaused: effects?.retries ?? 0,
      wastedRetriesCaused: effects?.wasted ?? 0,
      wastedNsCaused: effects?.wastedNs ?? 0n,
      escalationsCaused: effects?.escalations ?? 0,
      findings: implied.length === 0 ? call.findings : [...call.findings, ...implied],
    };
  });

  const derivedEscalations = attributions.map((attribution): DerivedEscalation => {
    const call = attribution.call === null ? undefined : callByKey.get(attribution.call);
    return {
      key: attribution.escalation,
      call: attribution.call,
      server: call?.server ?? null,
      tool: call?.tool ?? null,
      category: attribution.category,
      avoidable: attribution.avoidable,
    };
  });

  return { calls: derivedCalls, escalations: derivedEscalations, reports: derivedReports };
}

const compareStarts = (a: { startNs: bigint; key: string }, b: { startNs: bigint; key: string }): number =>
  a.startNs !== b.startNs ? (a.startNs < b.startNs ? -1 : 1) : a.key < b.key ? -1 : a.key > b.key ? 1 : 0;

/**
 * The runs given and every run they are nested in, up the parent-run chain. A run already collected ends the walk:
 * its enclosing runs are collected too, and a cycle stops there.
 */
function withEnclosingRuns(runs: ReadonlySet<string>, parentRuns: ReadonlyMap<string, string>): Set<string> {
  const enclosing = new Set<string>();
  for (const run of runs) {
    let current: string | undefined = run;
    while (current !== undefined && !enclosing.has(current)) {
      enclosing.add(current);
      current = parentRuns.get(current);
    }
  }
  return enclosing;
}

/**
 * One call per MCP call (DOMAIN.md §5), when both ends report it. A server's instrumentation continues the trace from
 * the request's `_meta.traceparent`, so Sentry's span of a call that an agent instrumented with Errata's SDK made is a
 * child of the agent's client span, with the same tool and server: the same call seen from the other end. Ingest
 * cannot pair them (two processes send them, in two requests); the derivation sees the whole trace. A call recorded
 * by the server's own instrumentation (`serverSide`) whose parent span is a call of the same tool and server is such
 * a second view: dropped. The parent, the client's view, stays: only the client sees timeouts and transport failures,
 * and the retries are the agent's. A call the client recorded is never a view (a tool whose handler calls the same
 * tool again makes two calls), nor is one under a dropped view (a proxy's own call upstream, made while it served
 * the agent's call). Returns the calls kept and, for each view dropped, the call it views.
 */
function withoutSecondViews(calls: readonly FindingCall[]): {
  calls: FindingCall[];
  viewOf: Map<string, string>;
} {
  // Only a call its server recorded can be a view: a trace without one (most) needs no walk.
  if (!calls.some((call) => call.serverSide)) return { calls: [...calls], viewOf: new Map() };
  const byKey = new Map(calls.map((call) => [call.key, call]));
  // The same server too, where both say theirs.
  const sameToolParent = (call: FindingCall): FindingCall | undefined => {
    if (!call.serverSide) return undefined;
    const parent = call.parentKey === null ? undefined : byKey.get(call.parentKey);
    if (parent?.tool !== call.tool) return undefined;
    return parent.server === null || call.server === null || parent.server === call.server
      ? parent
      : undefined;
  };
  // Whether each call is a view, decided up its same-tool ancestors without recursion (a chain can be long); a cycle of
  // parents (ids are the producer's) is cut where the walk meets itself: that call counts as no view.
  const isView = new Map<string, boolean>();
  // One walk's buffers, emptied for each call: most walks are one call long, and a long trace has many calls.
  const chain: FindingCall[] = [];
  const onChain = new Set<string>();
  for (const call of calls) {
    chain.length = 0;
    onChain.clear();
    let current: FindingCall | undefined = call;
    while (current !== undefined && !isView.has(current.key) && !onChain.has(current.key)) {
      chain.push(current);
      onChain.add(current.key);
      current = sameToolParent(current);
    }
    let parentIsView = current === undefined || onChain.has(current.key) ? null : isView.get(current.key)!;
    for (const link of chain.reverse()) {
      const view = parentIsView === false;
      isView.set(link.key, view);
      parentIsView = view;
    }
  }
  const viewOf = new Map<string, string>();
  for (const call of calls) if (isView.get(call.key) === true) viewOf.set(call.key, call.parentKey!);
  return { calls: calls.filter((call) => !viewOf.has(call.key)), viewOf };
}

/** The runs started under a dropped view belong to the call it views: the agent's call delegated to them. */
function delegatedToKept(
  delegatedRuns: ReadonlyMap<string, readonly string[]>,
  viewOf: ReadonlyMap<string, string>,
): Map<string, readonly string[]> {
  const merged = new Map<string, readonly string[]>();
  for (const [key, runs] of delegatedRuns) {
    const kept = viewOf.get(key) ?? key;
    merged.set(kept, [...(merged.get(kept) ?? []), ...runs]);
  }
  return merged;
}

function firstOfEachKey<T extends { key: string }>(items: readonly T[]): T[] {
  const seen = new Set<string>();
  return items.filter((item) => !seen.has(item.key) && (seen.add(item.key), true));
}
