/**
 * `GET /reports/subagent-coverage` (DOMAIN.md §4, §8): how much of the delegated work came back, whether failure
 * reports carried what the coordinator needs (category, attempted, partial results, alternatives), how often
 * subagents absorbed transient failures themselves, and reports that claimed success over an unrecovered failure.
 * Pure and order-independent.
 *
 * Decisions where DOMAIN.md is silent (libs/domain/README.md): coverage is clamped to [0, 1] and read only from
 * reports with a positive total; an element counts as carried when present (a partial-results count of 0 is an
 * explicit "nothing came back"); a failure is recovered when its retry chain ends ok / ok_empty; a silent partial
 * is a `complete` report in a run with an unrecovered failed call (result texts are not read for it).
 */
import { FAILED_OUTCOMES, type SubagentStatus } from './events';
import { analyzeRetries, compareCalls, type CallFact } from './retries';
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

export type PropagationElement = 'category' | 'attempted' | 'partialResults' | 'alternatives';

/** The four elements of a failure report (DOMAIN.md §4), in report order. */
export const PROPAGATION_ELEMENTS: readonly PropagationElement[] = [
  'category',
  'attempted',
  'partialResults',
  'alternatives',
];

/** Coverage buckets: [0, 25 %), [25, 50 %), [50, 75 %), [75, 100 %) and exactly 100 %. */
export const COVERAGE_BUCKETS = ['0-25', '25-50', '50-75', '75-100', '100'] as const;
export type CoverageBucket = (typeof COVERAGE_BUCKETS)[number];

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

const carries: Record<PropagationElement, (report: SubagentReportFact) => boolean> = {
  category: (report) => report.category !== null && report.category.trim() !== '',
  attempted: (report) => (report.attempted?.length ?? 0) > 0,
  partialResults: (report) => report.partialResults !== null && report.partialResults !== '',
  alternatives: (report) => (report.alternatives?.length ?? 0) > 0,
};

function coverageBucket(coverage: number): CoverageBucket {
  if (coverage >= 1) return '100';
  if (coverage >= 0.75) return '75-100';
  if (coverage >= 0.5) return '50-75';
  return coverage >= 0.25 ? '25-50' : '0-25';
}

const share = (part: number, whole: number): number | null => (whole === 0 ? null : part / whole);

export function subagentCoverageReport(
  reports: readonly SubagentReportFact[],
  calls: readonly CallFact[],
  subagentRuns: ReadonlySet<string>,
  options: { readonly windowMs?: number } = {},
): SubagentCoverageReport {
  const ordered = [...reports].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const sortedCalls = [...calls].sort(compareCalls);
  const recoveredChainOf = new Map<string, boolean>();
  for (const chain of analyzeRetries(sortedCalls, options).chains) {
    for (const key of chain.calls) recoveredChainOf.set(key, chain.recovered);
  }
  const isFailed = (call: CallFact) => FAILED_OUTCOMES.includes(call.outcome);
  const recovered = (call: CallFact) => recoveredChainOf.get(call.key) === true;

  const coverages: number[] = [];
  const distribution = Object.fromEntries(COVERAGE_BUCKETS.map((bucket) => [bucket, 0])) as Record<
    CoverageBucket,
    number
  >;
  const missing = Object.fromEntries(PROPAGATION_ELEMENTS.map((element) => [element, 0])) as Record<
    PropagationElement,
    number
  >;
  let failureReports = 0;
  let fullyPropagated = 0;
  for (const report of ordered) {
    if (report.completed !== null && report.total !== null && report.total > 0) {
      const coverage = Math.min(1, Math.max(0, report.completed / report.total));
      coverages.push(coverage);
      distribution[coverageBucket(coverage)]++;
    }
    if (report.status === 'complete') continue;
    failureReports++;
    const absent = PROPAGATION_ELEMENTS.filter((element) => !carries[element](report));
    for (const element of absent) missing[element]++;
    if (absent.length === 0) fullyPropagated++;
  }

  const unrecoveredRuns = new Set(
    sortedCalls.filter((call) => isFailed(call) && !recovered(call)).map((call) => call.runId),
  );
  const transient = sortedCalls.filter(
    (call) => subagentRuns.has(call.runId) && isFailed(call) && call.category === 'transient',
  );
  const absorbed = transient.filter(recovered).length;
  const mostMissing = PROPAGATION_ELEMENTS.reduce<PropagationElement | null>(
    (most, element) => (missing[element] > (most === null ? 0 : missing[most]) ? element : most),
    null,
  );

  return {
    rulesVersion: RULES_VERSION,
    reports: ordered.length,
    complete: ordered.filter((report) => report.status === 'complete').length,
    partial: ordered.filter((report) => report.status === 'partial').length,
    failed: ordered.filter((report) => report.status === 'failed').length,
    meanCoverage: coverages.length === 0 ? null : coverages.reduce((sum, c) => sum + c, 0) / coverages.length,
    coverageDistribution: distribution,
    propagationCompleteness: share(fullyPropagated, failureReports),
    missingElements: missing,
    mostMissingElement: mostMissing,
    transientFailuresInSubagents: transient.length,
    absorbedTransientFailures: absorbed,
    localAbsorptionRate: share(absorbed, transient.length),
    silentPartials: ordered.filter(
      (report) => report.status === 'complete' && unrecoveredRuns.has(report.runId),
    ).length,
  };
}
