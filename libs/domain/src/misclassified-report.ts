/**
 * `GET /reports/misclassified-results` (DOMAIN.md §3, §8): per server and tool, valid empty results reported as
 * errors (empty-as-error) and failures reported as success (failure-as-empty), with rates over all the tool's
 * calls, the retries and escalations they triggered, and a few redacted samples. Pure and order-independent.
 *
 * The subagent case of failure-as-empty: a call that came back ok / ok_empty while a subagent run it started
 * (`delegatedRuns`: the runs whose agent span is a child of the call, e.g. a remote subagent behind an MCP tool)
 * holds a failed call that was never recovered.
 */
import { escalationReport, type EscalationCall, type EscalationFact } from './escalation-report';
import { FAILED_OUTCOMES } from './events';
import { analyzeRetries, compareCalls, type CallFact, type RetryChain } from './retries';
import { RULES_VERSION } from './rules';
import { compareText, isoFromNs } from './report-order';

export type MisclassificationDirection = 'emptyAsError' | 'failureAsEmpty';

/** A call as this report reads it: escalation facts plus the classification's misclassification flags. */
export interface MisclassificationCall extends EscalationCall {
  readonly emptyAsError: boolean;
  /** What decided the classification (`empty:code:NO_TICKETS_FOUND`, `failure:ok_false`, …). */
  readonly evidence: string | null;
  /** The stored (redacted, truncated) result text, else the structured JSON, else the status message. */
  readonly sampleText: string | null;
}

export interface MisclassificationSample {
  readonly direction: MisclassificationDirection;
  readonly traceId: string;
  readonly spanId: string;
  readonly runId: string;
  readonly startTime: string;
  readonly evidence: string | null;
  readonly text: string | null;
}

export interface MisclassificationGroup {
  readonly server: string | null;
  readonly tool: string;
  readonly calls: number;
  readonly emptyAsError: number;
  readonly failureAsEmpty: number;
  readonly emptyAsErrorRate: number;
  readonly failureAsEmptyRate: number;
  /** Retries of misclassified calls. */
  readonly retriesTriggered: number;
  /** Escalations attributed to misclassified calls. */
  readonly escalationsTriggered: number;
  readonly samples: readonly MisclassificationSample[];
}

export interface MisclassifiedReport {
  readonly rulesVersion: number;
  readonly totals: { readonly calls: number; readonly emptyAsError: number; readonly failureAsEmpty: number };
  readonly groups: readonly MisclassificationGroup[];
}

export interface MisclassifiedOptions {
  readonly windowMs?: number;
  /** Samples per group and direction (the earliest calls). Default 3. */
  readonly samplesPerDirection?: number;
  /** Call span id → the runs of the subagents that call started. */
  readonly delegatedRuns?: ReadonlyMap<string, readonly string[]>;
}

export function misclassifiedReport(
  calls: readonly MisclassificationCall[],
  escalations: readonly EscalationFact[],
  options: MisclassifiedOptions = {},
): MisclassifiedReport {
  const ordered = [...calls].sort(compareCalls);
  const { retries, chains } = analyzeRetries(ordered, options);
  const hiddenBySubagent = subagentHiddenFailures(ordered, chains, options.delegatedRuns);
  const directionOf = (call: MisclassificationCall): MisclassificationDirection | null =>
    call.emptyAsError
      ? 'emptyAsError'
      : call.failureAsEmpty || hiddenBySubagent.has(call.key)
        ? 'failureAsEmpty'
        : null;

  const retriesOf = new Map<string, number>();
  for (const link of retries) retriesOf.set(link.retryOf, (retriesOf.get(link.retryOf) ?? 0) + 1);
  const escalationsOf = new Map<string, number>();
  for (const { call } of escalationReport(ordered, escalations, options).attributions) {
    if (call !== null) escalationsOf.set(call, (escalationsOf.get(call) ?? 0) + 1);
  }

  const perSample = options.samplesPerDirection ?? 3;
  const groups = new Map<string, { server: string | null; tool: string; calls: MisclassificationCall[] }>();
  for (const call of ordered) {
    const key = JSON.stringify([call.server, call.tool]);
    const group = groups.get(key) ?? { server: call.server, tool: call.tool, calls: [] };
    group.calls.push(call);
    groups.set(key, group);
  }

  const rows: MisclassificationGroup[] = [];
  let emptyAsErrorTotal = 0;
  let failureAsEmptyTotal = 0;
  for (const group of groups.values()) {
    const counts = { emptyAsError: 0, failureAsEmpty: 0, retriesTriggered: 0, escalationsTriggered: 0 };
    const samples: MisclassificationSample[] = [];
    const sampled = { emptyAsError: 0, failureAsEmpty: 0 };
    for (const call of group.calls) {
      const direction = directionOf(call);
      if (direction === null) continue;
      counts[direction]++;
      counts.retriesTriggered += retriesOf.get(call.key) ?? 0;
      counts.escalationsTriggered += escalationsOf.get(call.key) ?? 0;
      if (sampled[direction]++ < perSample) {
        samples.push({
          direction,
          traceId: call.traceId,
          spanId: call.key,
          runId: call.runId,
          startTime: isoFromNs(call.startNs),
          evidence: call.failureAsEmpty || call.emptyAsError ? call.evidence : 'failure:subagent_unrecovered',
          text: call.sampleText,
        });
      }
    }
    emptyAsErrorTotal += counts.emptyAsError;
    failureAsEmptyTotal += counts.failureAsEmpty;
    if (counts.emptyAsError + counts.failureAsEmpty === 0) continue;
    const total = group.calls.length;
    rows.push({
      server: group.server,
      tool: group.tool,
      calls: total,
      emptyAsError: counts.emptyAsError,
      failureAsEmpty: counts.failureAsEmpty,
      emptyAsErrorRate: counts.emptyAsError / total,
      failureAsEmptyRate: counts.failureAsEmpty / total,
      retriesTriggered: counts.retriesTriggered,
      escalationsTriggered: counts.escalationsTriggered,
      samples,
    });
  }
  rows.sort(
    (a, b) =>
      b.emptyAsError + b.failureAsEmpty - (a.emptyAsError + a.failureAsEmpty) ||
      compareText(a.server, b.server) ||
      compareText(a.tool, b.tool),
  );
  return {
    rulesVersion: RULES_VERSION,
    totals: { calls: ordered.length, emptyAsError: emptyAsErrorTotal, failureAsEmpty: failureAsEmptyTotal },
    groups: rows,
  };
}

/**
 * The subagent case of failure-as-empty: calls that came back ok / ok_empty while a subagent run they started
 * (`delegatedRuns`) holds a failed call whose retry chain never recovered (or that was never retried).
 */
export function subagentHiddenFailures(
  calls: readonly CallFact[],
  chains: readonly RetryChain[],
  delegatedRuns: ReadonlyMap<string, readonly string[]> | undefined,
): Set<string> {
  const hidden = new Set<string>();
  if (delegatedRuns === undefined || delegatedRuns.size === 0) return hidden;
  const recovered = new Map<string, boolean>();
  for (const chain of chains) for (const key of chain.calls) recovered.set(key, chain.recovered);
  const unrecoveredRuns = new Set(
    calls
      .filter((call) => FAILED_OUTCOMES.includes(call.outcome) && recovered.get(call.key) !== true)
      .map((call) => call.runId),
  );
  for (const call of calls) {
    if (call.outcome !== 'ok' && call.outcome !== 'ok_empty') continue;
    if ((delegatedRuns.get(call.key) ?? []).some((runId) => unrecoveredRuns.has(runId))) hidden.add(call.key);
  }
  return hidden;
}
