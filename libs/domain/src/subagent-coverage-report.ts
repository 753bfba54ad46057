/**
 * `GET /reports/subagent-coverage` (DOMAIN.md §4, §8): how much of the delegated work came back, whether failure
 * reports carried what the coordinator needs (category, attempted, partial results, alternatives), how often
 * subagents absorbed transient failures themselves, and reports that claimed success over an unrecovered failure.
 * Pure and order-independent.
 *
 * Decisions where DOMAIN.md is silent (libs/domain/README.md): coverage is clamped to [0, 1] and read only from
 * reports with a positive total; an element counts as carried when present (a partial-results count of 0 is an
 * explicit "nothing came back"); a failure is recovered when its retry chain ends ok / ok_empty, and absorbed
 * locally when the call that ended it ok / ok_empty is in the failure's own run; a silent partial is a `complete`
 * report in a run with an unrecovered failed call in it or in a run nested under it, or a call's result that claims
 * success (the subagent case of failure-as-empty) over such a run with no such report: one per hand-back.
 */
import type { SubagentStatus } from './events';
import {
  contributionsInMemory,
  COVERAGE_MEASURE,
  MISSING_MEASURE,
  REPORT_MEASURES,
  sumContributions,
  sumRows,
  totalOf,
  traceFactsOfCalls,
  type CallMeasure,
  type CallSums,
  type ReportSums,
} from './report-contributions';
import type { CallFact } from './retries';
import {
  COVERAGE_BUCKETS,
  PROPAGATION_ELEMENTS,
  type CoverageBucket,
  type PropagationElement,
} from './subagent-report-elements';
import { RULES_VERSION } from './rules';

export interface SubagentReportFact {
  /** The report span's id. */
  readonly key: string;
  readonly runId: string;
  readonly status: SubagentStatus;
  readonly completed: number | null;
  readonly total: number | null;
  readonly category: string | null;
  readonly attempted: readonly string[] | null;
  readonly alternatives: readonly string[] | null;
  readonly partialResults: number | string | null;
}

export interface SubagentCoverageReport {
  readonly rulesVersion: number;
  readonly reports: number;
  readonly complete: number;
  readonly partial: number;
  readonly failed: number;
  /** Mean of completed / total over reports carrying both; null when none does. */
  readonly meanCoverage: number | null;
  readonly coverageDistribution: Readonly<Record<CoverageBucket, number>>;
  /** Share of partial / failed reports carrying all four elements; null without such reports. */
  readonly propagationCompleteness: number | null;
  /** Partial / failed reports missing each element. */
  readonly missingElements: Readonly<Record<PropagationElement, number>>;
  /** The element missing most often (first in report order on a tie); null when none is missing. */
  readonly mostMissingElement: PropagationElement | null;
  readonly transientFailuresInSubagents: number;
  readonly absorbedTransientFailures: number;
  /** absorbed / transient failures inside subagent runs; null without such failures. */
  readonly localAbsorptionRate: number | null;
  readonly silentPartials: number;
}

const share = (part: number, whole: number): number | null => (whole === 0 ? null : part / whole);

export function subagentCoverageReport(
  reports: readonly SubagentReportFact[],
  calls: readonly CallFact[],
  subagentRuns: ReadonlySet<string>,
  options: {
    readonly windowMs?: number;
    /** Run id → the run it is nested in (`RunRef.parentRunId`), for failures in nested subagent runs. */
    readonly parentRuns?: ReadonlyMap<string, string>;
    /** Call span id → the runs started under it, for results that claim success over a subagent's failure. */
    readonly delegatedRuns?: ReadonlyMap<string, readonly string[]>;
  } = {},
): SubagentCoverageReport {
  const facts = traceFactsOfCalls(calls, {
    subagentRuns,
    parentRuns: options.parentRuns ?? new Map(),
    delegatedRuns: options.delegatedRuns ?? new Map(),
    reports: reports.map((report) => ({ agentName: null, traceId: '', startNs: 0n, ...report })),
  });
  const sums = sumContributions(contributionsInMemory(facts, options));
  return subagentCoverageFromSums(sums.reports, sums.calls);
}

/** The call measures `subagentCoverageFromSums` reads (local absorption). */
export const COVERAGE_CALL_MEASURES: readonly CallMeasure[] = ['subagent_transient', 'absorbed_transient'];

/** The report from summed contributions of subagent reports, and of calls (for local absorption). */
export function subagentCoverageFromSums(
  reportRows: readonly ReportSums[],
  callRows: readonly CallSums[],
): SubagentCoverageReport {
  const total = totalOf(reportRows, REPORT_MEASURES);
  const calls = sumRows(callRows);
  const missing = Object.fromEntries(
    PROPAGATION_ELEMENTS.map((element) => [element, Number(total[MISSING_MEASURE[element]])]),
  ) as Record<PropagationElement, number>;
  const mostMissing = PROPAGATION_ELEMENTS.reduce<PropagationElement | null>(
    (most, element) => (missing[element] > (most === null ? 0 : missing[most]) ? element : most),
    null,
  );
  const coverageReports = Number(total.coverage_reports);
  const transient = Number(calls.subagent_transient);
  const absorbed = Number(calls.absorbed_transient);
  return {
    rulesVersion: RULES_VERSION,
    reports: Number(total.reports),
    complete: Number(total.complete),
    partial: Number(total.partial),
    failed: Number(total.failed),
    meanCoverage: coverageReports === 0 ? null : Number(total.coverage_nanos) / 1e9 / coverageReports,
    coverageDistribution: Object.fromEntries(
      COVERAGE_BUCKETS.map((bucket) => [bucket, Number(total[COVERAGE_MEASURE[bucket]])]),
    ) as Record<CoverageBucket, number>,
    propagationCompleteness: share(Number(total.fully_propagated), Number(total.failure_reports)),
    missingElements: missing,
    mostMissingElement: mostMissing,
    transientFailuresInSubagents: transient,
    absorbedTransientFailures: absorbed,
    localAbsorptionRate: share(absorbed, transient),
    silentPartials: Number(total.silent_partials),
  };
}
