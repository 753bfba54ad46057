/**
 * `GET /reports/misclassified-results` (DOMAIN.md §3, §8): per server and tool, valid empty results reported as
 * errors (empty-as-error) and failures reported as success (failure-as-empty), with rates over all the tool's
 * calls, the retries and escalations they triggered, and a few redacted samples. Pure and order-independent.
 *
 * The subagent case of failure-as-empty: a call that came back ok / ok_empty while a subagent run it started
 * (`delegatedRuns`: the runs whose agent span is a child of the call, e.g. a remote subagent behind an MCP tool)
 * holds a failed call that was never recovered.
 */
import type { EscalationCall, EscalationFact } from './escalation-report';
import { FAILED_OUTCOMES } from './events';
import {
  compareOffences,
  contributionsInMemory,
  offenceKey,
  offenceSample,
  offenceTimelines,
  sumContributions,
  sumRows,
  traceFactsOfCalls,
  type CallMeasure,
  type CallSums,
  type FindingContribution,
} from './report-contributions';
import type { CallFact, RetryChain } from './retries';
import { RULES_VERSION, type FindingRule } from './rules';
import { compareText } from './report-order';

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
  const facts = traceFactsOfCalls(calls, { escalations, delegatedRuns: options.delegatedRuns ?? new Map() });
  const contributions = contributionsInMemory(facts, options);
  const perSample = options.samplesPerDirection ?? 3;
  const timelines = offenceTimelines(contributions.findings, perSample);
  return misclassifiedFromSums(sumContributions(contributions).calls, (server, tool) =>
    misclassificationSamples(
      MISCLASSIFICATION_RULES.flatMap(
        (rule) => timelines.get(offenceKey(server, tool, rule))?.earliest ?? [],
      ),
    ),
  );
}

/** The finding rules that are misclassifications: their offences are the report's samples. */
export const MISCLASSIFICATION_RULES = [
  'empty-as-error',
  'failure-as-empty',
] as const satisfies FindingRule[];

/** Samples from the earliest offences of both directions, in call order. */
export function misclassificationSamples(
  offences: readonly FindingContribution[],
): MisclassificationSample[] {
  return [...offences].sort(compareOffences).map((offence) => ({
    direction: offence.rule === 'empty-as-error' ? 'emptyAsError' : 'failureAsEmpty',
    ...offenceSample(offence),
  }));
}

/** The call measures `misclassifiedFromSums` reads. */
export const MISCLASSIFIED_MEASURES: readonly CallMeasure[] = [
  'calls',
  'empty_as_error',
  'failure_as_empty',
  'misclassified_retries',
  'misclassified_escalations',
];

/**
 * The report from summed contributions, with each group's samples from `samplesOf`. The totals are those of
 * `totalRows`: every row, when `rows` are one page of the groups.
 */
export function misclassifiedFromSums(
  rows: readonly CallSums[],
  samplesOf: (server: string | null, tool: string) => readonly MisclassificationSample[],
  totalRows: readonly CallSums[] = rows,
): MisclassifiedReport {
  const byTool = new Map<string, { server: string | null; tool: string; rows: CallSums[] }>();
  for (const row of rows) {
    if (row.tool === null) continue;
    const key = JSON.stringify([row.server, row.tool]);
    const group = byTool.get(key) ?? { server: row.server, tool: row.tool, rows: [] };
    group.rows.push(row);
    byTool.set(key, group);
  }
  const groups: MisclassificationGroup[] = [];
  for (const { server, tool, rows: list } of byTool.values()) {
    const sums = sumRows(list);
    const emptyAsError = Number(sums.empty_as_error);
    const failureAsEmpty = Number(sums.failure_as_empty);
    if (emptyAsError + failureAsEmpty === 0) continue;
    const calls = Number(sums.calls);
    groups.push({
      server,
      tool,
      calls,
      emptyAsError,
      failureAsEmpty,
      emptyAsErrorRate: emptyAsError / calls,
      failureAsEmptyRate: failureAsEmpty / calls,
      retriesTriggered: Number(sums.misclassified_retries),
      escalationsTriggered: Number(sums.misclassified_escalations),
      samples: samplesOf(server, tool),
    });
  }
  groups.sort(
    (a, b) =>
      b.emptyAsError + b.failureAsEmpty - (a.emptyAsError + a.failureAsEmpty) ||
      compareText(a.server, b.server) ||
      compareText(a.tool, b.tool),
  );
  const totals = sumRows(totalRows);
  return {
    rulesVersion: RULES_VERSION,
    totals: {
      calls: Number(totals.calls),
      emptyAsError: Number(totals.empty_as_error),
      failureAsEmpty: Number(totals.failure_as_empty),
    },
    groups,
  };
}

/**
 * The subagent case of failure-as-empty (DOMAIN.md §3): calls that came back empty (`ok_empty`: no items, or "No
 * results found") while a subagent run they started (`delegatedRuns`) holds a failed call whose retry chain never
 * recovered (or that was never retried). A result with data is the subagent's partial answer, not a hidden failure.
 */
export function subagentHiddenFailures(
  calls: readonly CallFact[],
  chains: readonly RetryChain[],
  delegatedRuns: ReadonlyMap<string, readonly string[]> | undefined,
): Set<string> {
  const hidden = new Set<string>();
  if (delegatedRuns === undefined || delegatedRuns.size === 0) return hidden;
  const unrecovered = unrecoveredRuns(calls, chains);
  for (const call of calls) {
    if (call.outcome !== 'ok_empty') continue;
    if ((delegatedRuns.get(call.key) ?? []).some((runId) => unrecovered.has(runId))) hidden.add(call.key);
  }
  return hidden;
}

/**
 * The runs holding a failed call whose retry chain never recovered (or that was never retried). An empty-as-error
 * is no such failure: the tool found nothing and its server said so as an error (its own finding); a subagent that
 * then answers "nothing found" hides nothing.
 */
export function unrecoveredRuns(calls: readonly CallFact[], chains: readonly RetryChain[]): Set<string> {
  const recovered = new Map<string, boolean>();
  for (const chain of chains) for (const key of chain.calls) recovered.set(key, chain.recovered);
  return new Set(
    calls
      .filter(
        (call) =>
          FAILED_OUTCOMES.includes(call.outcome) &&
          call.category !== 'empty' &&
          recovered.get(call.key) !== true,
      )
      .map((call) => call.runId),
  );
}
