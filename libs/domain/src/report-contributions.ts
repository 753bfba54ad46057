/**
 * Every report is a sum. Each call, retry, unrecovered chain, escalation, finding and subagent report of a trace
 * contributes a small vector of counts under a few dimensions (server, tool, category, agent, …) at its own start
 * time; a report over a window sums the contributions that started in it and shapes the sums (`*FromSums`).
 * The projection stores the contributions and keeps hourly and daily rollups of them, so a report over 30 days
 * reads a few thousand rows; the pure reports sum in memory. Both shape with the same functions.
 */
import { FAILED_OUTCOMES } from './events';
import type { CallFinding } from './call-findings';
import type { FindingCall } from './findings-report';
import { RETRY_LABELS, type CallFact } from './retries';
import type { FindingRule } from './rules';
import {
  coverageBucket,
  COVERAGE_BUCKETS,
  missingElements,
  PROPAGATION_ELEMENTS,
  type CoverageBucket,
  type PropagationElement,
} from './subagent-report-elements';
import { deriveTraceFacts, RETRY_SUCCEEDED, type TraceDerivation, type TraceFacts } from './trace-derivation';
import { compareText, isoFromNs } from './report-order';

/** Measures of calls, retries, chains and escalations; names are the rollup tables' column names. */
export const CALL_MEASURES = [
  'calls',
  'failures',
  'violating_calls',
  'empty_as_error',
  'failure_as_empty',
  'misclassified_retries',
  'misclassified_escalations',
  'subagent_transient',
  'absorbed_transient',
  'retries',
  'wasted_retries',
  'wasted_ns',
  'wasted_tokens',
  ...RETRY_LABELS,
  'unrecovered_chains',
  'escalations',
  'attributed',
  'avoidable',
  'to_human',
  'to_user',
  'to_coordinator',
] as const;
export type CallMeasure = (typeof CALL_MEASURES)[number];

export const FINDING_MEASURES = [
  'offences',
  /**
   * Offences of a call's own findings, a declared retryability its retry proved wrong among them (the hidden subagent
   * failure and reports are not the tool's doing).
   */
  'call_offences',
  'retries_caused',
  'wasted_retries',
  'wasted_ns',
  'escalations_caused',
] as const;
export type FindingMeasure = (typeof FINDING_MEASURES)[number];

const MISSING_MEASURE = {
  category: 'missing_category',
  attempted: 'missing_attempted',
  partialResults: 'missing_partial_results',
  alternatives: 'missing_alternatives',
} as const satisfies Record<PropagationElement, string>;

const COVERAGE_MEASURE = {
  '0-25': 'coverage_0_25',
  '25-50': 'coverage_25_50',
  '50-75': 'coverage_50_75',
  '75-100': 'coverage_75_100',
  '100': 'coverage_100',
} as const satisfies Record<CoverageBucket, string>;

export const REPORT_MEASURES = [
  'reports',
  'complete',
  'partial',
  'failed',
  'coverage_reports',
  /** Sum of each report's coverage in billionths: integers add up exactly in any order. */
  'coverage_nanos',
  ...COVERAGE_BUCKETS.map((bucket) => COVERAGE_MEASURE[bucket]),
  'failure_reports',
  'fully_propagated',
  ...PROPAGATION_ELEMENTS.map((element) => MISSING_MEASURE[element]),
  'silent_partials',
] as const;
export type ReportMeasure = (typeof REPORT_MEASURES)[number];

export { COVERAGE_MEASURE, MISSING_MEASURE };

export type Measures<M extends string> = Partial<Record<M, number>>;

/** Where and by whom a contribution happened: its trace, item span, start and agent run. */
interface Placed {
  readonly traceId: string;
  /** The span id of the call, escalation or report it comes from. */
  readonly key: string;
  readonly startNs: bigint;
  readonly agentName: string | null;
  readonly agentId: string | null;
}

export type CallRole = 'call' | 'retry' | 'chain' | 'escalation';

export interface CallContribution extends Placed {
  readonly role: CallRole;
  readonly server: string | null;
  readonly tool: string | null;
  readonly serverVersion: string | null;
  readonly category: string | null;
  readonly measures: Measures<CallMeasure>;
}

export interface FindingContribution extends Placed {
  readonly runId: string;
  readonly server: string | null;
  readonly tool: string;
  readonly rule: FindingRule;
  readonly evidence: string;
  readonly serverVersion: string | null;
  readonly sampleText: string | null;
  readonly measures: Measures<FindingMeasure>;
}

export interface ReportContribution extends Placed {
  readonly measures: Measures<ReportMeasure>;
}

export interface Contributions {
  readonly calls: readonly CallContribution[];
  readonly findings: readonly FindingContribution[];
  readonly reports: readonly ReportContribution[];
}

export interface RunAgent {
  readonly name: string | null;
  readonly id: string | null;
}

/** Subagent reports without an agent name are reported under this name. */
export const UNNAMED_SUBAGENT = '(unnamed subagent)';

const flag = (value: boolean): number => (value ? 1 : 0);

/** The contributions of whole traces, from their facts and what was derived from them. */
export function contributionsOf(
  facts: TraceFacts,
  derivation: TraceDerivation,
  agentOf: (runId: string) => RunAgent,
): Contributions {
  const callByKey = new Map(facts.calls.map((call) => [call.key, call]));
  const calls: CallContribution[] = [];
  const findings: FindingContribution[] = [];
  for (const derived of derivation.calls) {
    const call = callByKey.get(derived.key)!;
    const agent = agentOf(call.runId);
    const placed = {
      traceId: call.traceId,
      key: call.key,
      startNs: call.startNs,
      agentName: agent.name,
      agentId: agent.id,
    };
    // The tool's own doing (the scorecard's violations): the call's stored findings, and a declared retryability its
    // retry proved wrong; not a hidden subagent failure, which is the subagent run's.
    const own = (finding: CallFinding): boolean =>
      (finding.rule === 'retryable-mismatch' && finding.evidence === RETRY_SUCCEEDED) ||
      call.findings.some((f) => f.rule === finding.rule && f.evidence === finding.evidence);
    const failed = FAILED_OUTCOMES.includes(call.outcome);
    const misclassified = derived.misclassified !== null;
    const subagentTransient = derived.inSubagentRun && failed && call.category === 'transient';
    calls.push(
      callContribution(placed, {
        role: 'call',
        server: call.server,
        tool: call.tool,
        serverVersion: call.serverVersion,
        category: derived.failureCategory,
        measures: {
          calls: 1,
          failures: flag(failed),
          violating_calls: flag(derived.findings.some(own)),
          empty_as_error: flag(derived.misclassified === 'emptyAsError'),
          failure_as_empty: flag(derived.misclassified === 'failureAsEmpty'),
          misclassified_retries: misclassified ? derived.retriesCaused : 0,
          misclassified_escalations: misclassified ? derived.escalationsCaused : 0,
          subagent_transient: flag(subagentTransient),
          absorbed_transient: flag(subagentTransient && derived.chainRecoveredInOwnRun === true),
        },
      }),
    );
    const retry = derived.retry;
    if (retry !== null) {
      calls.push(
        callContribution(placed, {
          role: 'retry',
          server: retry.retriedServer,
          tool: retry.retriedTool,
          serverVersion: null,
          category: retry.retriedCategory,
          measures: {
            retries: 1,
            wasted_retries: flag(retry.wasted),
            wasted_ns: retry.wasted ? Number(retry.durationNs) : 0,
            wasted_tokens: retry.wasted ? (retry.tokens ?? 0) : 0,
            [retry.label]: 1,
          },
        }),
      );
    }
    if (derived.unrecoveredChain !== null) {
      calls.push(
        callContribution(placed, {
          role: 'chain',
          server: call.server,
          tool: call.tool,
          serverVersion: null,
          category: derived.unrecoveredChain,
          measures: { unrecovered_chains: 1 },
        }),
      );
    }
    for (const finding of derived.findings) {
      findings.push(
        findingContribution(placed, {
          runId: call.runId,
          server: call.server,
          tool: call.tool,
          rule: finding.rule,
          evidence: finding.evidence,
          serverVersion: call.serverVersion,
          sampleText: call.sampleText,
          measures: {
            offences: 1,
            call_offences: flag(own(finding)),
            retries_caused: derived.retriesCaused,
            wasted_retries: derived.wastedRetriesCaused,
            wasted_ns: Number(derived.wastedNsCaused),
            escalations_caused: derived.escalationsCaused,
          },
        }),
      );
    }
  }

  const escalationByKey = new Map(facts.escalations.map((escalation) => [escalation.key, escalation]));
  for (const derived of derivation.escalations) {
    const escalation = escalationByKey.get(derived.key)!;
    const agent = agentOf(escalation.runId);
    calls.push({
      traceId: escalation.traceId,
      key: escalation.key,
      startNs: escalation.startNs,
      agentName: agent.name,
      agentId: agent.id,
      role: 'escalation',
      server: derived.server,
      tool: derived.tool,
      serverVersion: null,
      category: derived.category,
      measures: {
        escalations: 1,
        attributed: flag(derived.call !== null),
        avoidable: flag(derived.avoidable !== null),
        [`to_${escalation.target}`]: 1,
      },
    });
  }

  const reports: ReportContribution[] = [];
  for (const derived of derivation.calls) {
    if (derived.silentPartialRun === null) continue;
    const call = callByKey.get(derived.key)!;
    const agent = agentOf(derived.silentPartialRun);
    // A result is no subagent report: it adds a silent partial of the subagent it hides, under that agent's name.
    reports.push({
      traceId: call.traceId,
      key: call.key,
      startNs: call.startNs,
      agentName: agent.name,
      agentId: agent.id,
      measures: { silent_partials: 1 },
    });
  }

  const reportByKey = new Map(facts.reports.map((report) => [report.key, report]));
  for (const derived of derivation.reports) {
    const report = reportByKey.get(derived.key)!;
    const placed = {
      traceId: report.traceId,
      key: report.key,
      startNs: report.startNs,
      // A report's agent is the subagent that made it: its run's agent, as the report fact already says.
      agentName: report.agentName,
      agentId: agentOf(report.runId).id,
    };
    const measures: Record<string, number> = {
      reports: 1,
      [report.status]: 1,
      silent_partials: flag(derived.silentPartial),
    };
    if (report.completed !== null && report.total !== null && report.total > 0) {
      const coverage = Math.min(1, Math.max(0, report.completed / report.total));
      measures.coverage_reports = 1;
      measures.coverage_nanos = Math.round(coverage * 1e9);
      measures[COVERAGE_MEASURE[coverageBucket(coverage)]] = 1;
    }
    if (report.status !== 'complete') {
      measures.failure_reports = 1;
      const missing = missingElements(report);
      for (const element of missing) measures[MISSING_MEASURE[element]] = 1;
      measures.fully_propagated = flag(missing.length === 0);
      if (missing.length > 0) {
        const evidence = `missing:${missing.join(',')}`;
        findings.push(
          findingContribution(placed, {
            runId: report.runId,
            server: null,
            tool: report.agentName ?? UNNAMED_SUBAGENT,
            rule: 'missing-propagation-context',
            evidence,
            serverVersion: null,
            sampleText: null,
            measures: { offences: 1 },
          }),
        );
      }
    }
    reports.push({
      traceId: placed.traceId,
      key: placed.key,
      startNs: placed.startNs,
      agentName: placed.agentName,
      agentId: placed.agentId,
      measures,
    });
  }
  return { calls, findings, reports };
}

/**
 * Contributions are written out field by field: spreading the shared `placed` part into each literal made V8 build
 * slow objects, the projector's largest JavaScript cost after the rows themselves (`bench:ingest` profile).
 */
function callContribution(placed: Placed, call: Omit<CallContribution, keyof Placed>): CallContribution {
  return {
    traceId: placed.traceId,
    key: placed.key,
    startNs: placed.startNs,
    agentName: placed.agentName,
    agentId: placed.agentId,
    role: call.role,
    server: call.server,
    tool: call.tool,
    serverVersion: call.serverVersion,
    category: call.category,
    measures: call.measures,
  };
}

function findingContribution(
  placed: Placed,
  finding: Omit<FindingContribution, keyof Placed>,
): FindingContribution {
  return {
    traceId: placed.traceId,
    key: placed.key,
    startNs: placed.startNs,
    agentName: placed.agentName,
    agentId: placed.agentId,
    runId: finding.runId,
    server: finding.server,
    tool: finding.tool,
    rule: finding.rule,
    evidence: finding.evidence,
    serverVersion: finding.serverVersion,
    sampleText: finding.sampleText,
    measures: finding.measures,
  };
}

export interface CallSums {
  readonly server: string | null;
  readonly tool: string | null;
  readonly serverVersion: string | null;
  readonly category: string | null;
  readonly sums: Readonly<Record<CallMeasure, bigint>>;
}

export interface FindingSums {
  readonly server: string | null;
  readonly tool: string;
  readonly rule: FindingRule;
  readonly evidence: string;
  readonly serverVersion: string | null;
  readonly sums: Readonly<Record<FindingMeasure, bigint>>;
}

export interface ReportSums {
  readonly agentName: string | null;
  readonly sums: Readonly<Record<ReportMeasure, bigint>>;
}

/** A finding's earliest offences (its samples) and its latest, as samples and timelines read them. */
export interface OffenceTimeline {
  readonly earliest: readonly FindingContribution[];
  readonly latest: FindingContribution;
}

/** What the report shapers read: contributions summed per dimension (agent and time summed away). */
export interface SummedContributions {
  readonly calls: readonly CallSums[];
  readonly findings: readonly FindingSums[];
  readonly reports: readonly ReportSums[];
}

function sumBy<T extends { readonly measures: Measures<M> }, M extends string, D>(
  items: readonly T[],
  measures: readonly M[],
  dimensionsOf: (item: T) => D,
): { dimensions: D; sums: Record<M, bigint> }[] {
  const groups = new Map<string, { dimensions: D; sums: Record<M, bigint> }>();
  for (const item of items) {
    const dimensions = dimensionsOf(item);
    const key = JSON.stringify(dimensions);
    let group = groups.get(key);
    if (group === undefined) {
      const sums = Object.fromEntries(measures.map((m) => [m, 0n])) as Record<M, bigint>;
      groups.set(key, (group = { dimensions, sums }));
    }
    for (const measure of measures) {
      const value = item.measures[measure];
      if (value !== undefined) group.sums[measure] += BigInt(value);
    }
  }
  return [...groups.values()];
}

/** Sums contributions in memory, as the rollup queries do in SQL. */
export function sumContributions(contributions: Contributions): SummedContributions {
  return {
    calls: sumBy(contributions.calls, CALL_MEASURES, (c) => ({
      server: c.server,
      tool: c.tool,
      serverVersion: c.serverVersion,
      category: c.category,
    })).map(({ dimensions, sums }) => ({ ...dimensions, sums })),
    findings: sumBy(contributions.findings, FINDING_MEASURES, (c) => ({
      server: c.server,
      tool: c.tool,
      rule: c.rule,
      evidence: c.evidence,
      serverVersion: c.serverVersion,
    })).map(({ dimensions, sums }) => ({ ...dimensions, sums })),
    reports: sumBy(contributions.reports, REPORT_MEASURES, (c) => ({ agentName: c.agentName })).map(
      ({ dimensions, sums }) => ({ ...dimensions, sums }),
    ),
  };
}

/** The key of a finding's offences: (server, tool, rule). */
export const offenceKey = (server: string | null, tool: string, rule: FindingRule): string =>
  JSON.stringify([server, tool, rule]);

/** Orders offences as samples are picked: start time, then span id. */
export const compareOffences = (a: FindingContribution, b: FindingContribution): number =>
  a.startNs !== b.startNs ? (a.startNs < b.startNs ? -1 : 1) : compareText(a.key, b.key);

/** An offence as a report shows it: where it happened, when, why, and the call's stored (redacted) text. */
export const offenceSample = (offence: FindingContribution) => ({
  traceId: offence.traceId,
  spanId: offence.key,
  runId: offence.runId,
  startTime: isoFromNs(offence.startNs),
  evidence: offence.evidence,
  text: offence.sampleText,
});

/** The earliest `samples` and the latest offence of every finding, from contributions in memory. */
export function offenceTimelines(
  findings: readonly FindingContribution[],
  samples: number,
): Map<string, OffenceTimeline> {
  const byKey = new Map<string, FindingContribution[]>();
  for (const finding of findings) {
    const key = offenceKey(finding.server, finding.tool, finding.rule);
    byKey.set(key, [...(byKey.get(key) ?? []), finding]);
  }
  const timelines = new Map<string, OffenceTimeline>();
  for (const [key, list] of byKey) {
    list.sort(compareOffences);
    timelines.set(key, { earliest: list.slice(0, samples), latest: list[list.length - 1]! });
  }
  return timelines;
}

/** Pure reports: derive, contribute and sum a set of whole traces in memory, with a trace run's agent unknown. */
export function contributionsInMemory(
  facts: TraceFacts,
  options: { readonly windowMs?: number } = {},
): Contributions {
  const derivation = deriveTraceFacts(facts, options);
  return contributionsOf(facts, derivation, () => ({ name: null, id: null }));
}

/** Every measure summed over rows (zeros when there are none). */
export function totalOf<M extends string>(
  rows: readonly { readonly sums: Readonly<Record<M, bigint>> }[],
  measures: readonly M[],
): Record<M, bigint> {
  const total = Object.fromEntries(measures.map((m) => [m, 0n])) as Record<M, bigint>;
  for (const row of rows) for (const m of measures) total[m] += row.sums[m];
  return total;
}

export const sumRows = (rows: readonly CallSums[]): Record<CallMeasure, bigint> =>
  totalOf(rows, CALL_MEASURES);

/** A call as the pure reports' callers give it, completed with what a bare CallFact does not say. */
export function asFindingCall(call: CallFact & Partial<FindingCall>): FindingCall {
  return {
    parentKey: null,
    serverSide: false,
    failureAsEmpty: false,
    customerExplanation: false,
    emptyAsError: false,
    evidence: null,
    sampleText: null,
    serverVersion: null,
    declaredRetryable: null,
    findings: [],
    ...call,
  };
}

/** Trace facts of calls alone (no escalations, reports or subagents unless given). */
export function traceFactsOfCalls(
  calls: readonly (CallFact & Partial<FindingCall>)[],
  rest: Partial<Omit<TraceFacts, 'calls'>> = {},
): TraceFacts {
  return {
    calls: calls.map(asFindingCall),
    escalations: [],
    reports: [],
    subagentRuns: new Set(),
    delegatedRuns: new Map(),
    parentRuns: new Map(),
    ...rest,
  };
}
