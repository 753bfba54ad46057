/**
 * The reports' headline figures per time bucket, for charts, with wasted retries broken down as the retry-waste
 * report groups them. Each point is shaped by the reports' own shapers
 * from the sums of its bucket, so a point equals what the reports answer for that bucket's window. Pure.
 */
import { COVERAGE_CALL_MEASURES, subagentCoverageFromSums } from './subagent-coverage-report';
import { ESCALATION_MEASURES, escalationsFromSums } from './escalation-report';
import type { CallMeasure, CallSums, ReportSums } from './report-contributions';
import {
  RETRY_WASTE_MEASURES,
  retryWasteFromSums,
  type RetryWasteGroup,
  type RetryWasteGroupBy,
} from './retry-waste-report';

/** The call measures `seriesPointFromSums` reads. */
export const SERIES_CALL_MEASURES: readonly CallMeasure[] = [
  ...new Set<CallMeasure>([...RETRY_WASTE_MEASURES, ...ESCALATION_MEASURES, ...COVERAGE_CALL_MEASURES]),
];

export interface SeriesPoint {
  /** The bucket's window: whole hours or days, clipped to the requested window at its edges. */
  readonly from: string;
  readonly to: string;
  readonly calls: number;
  readonly failures: number;
  /** failures / calls; null without calls. */
  readonly failureRate: number | null;
  readonly retries: number;
  readonly wastedRetries: number;
  readonly wastedMs: number;
  readonly unrecoveredChains: number;
  readonly escalations: number;
  readonly avoidableEscalations: number;
  readonly subagentReports: number;
  readonly meanCoverage: number | null;
  /**
   * Wasted retries and their time by the retry-waste report's group key (the retried call's category, server or
   * server/tool); groups without retries in the bucket are left out.
   */
  readonly wastedRetriesBy: Readonly<Record<string, number>>;
  readonly wastedMsBy: Readonly<Record<string, number>>;
}

/** Groups whose keys read alike (a server and a tool named with "/") add up under that key. */
function sumByKey(groups: readonly RetryWasteGroup[], value: (group: RetryWasteGroup) => number) {
  const sums = new Map<string, number>();
  for (const group of groups) sums.set(group.key, (sums.get(group.key) ?? 0) + value(group));
  return Object.fromEntries(sums);
}

export function seriesPointFromSums(
  window: { readonly from: Date; readonly to: Date },
  calls: readonly CallSums[],
  reports: readonly ReportSums[],
  groupBy: RetryWasteGroupBy = 'category',
): SeriesPoint {
  // A point counts; it shows no wasted retries.
  const retryWaste = retryWasteFromSums(calls, groupBy, () => []);
  const { totals: escalations } = escalationsFromSums(calls);
  const coverage = subagentCoverageFromSums(reports, calls);
  const callCount = retryWaste.totals.calls;
  const retried = retryWaste.groups.filter((group) => group.retries > 0);
  return {
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    calls: callCount,
    failures: escalations.failures,
    failureRate: callCount === 0 ? null : escalations.failures / callCount,
    retries: retryWaste.totals.retries,
    wastedRetries: retryWaste.totals.wastedRetries,
    wastedMs: retryWaste.totals.wastedMs,
    unrecoveredChains: retryWaste.totals.unrecoveredChains,
    escalations: escalations.escalations,
    avoidableEscalations: escalations.avoidable,
    subagentReports: coverage.reports,
    meanCoverage: coverage.meanCoverage,
    wastedRetriesBy: sumByKey(retried, (group) => group.wastedRetries),
    wastedMsBy: sumByKey(retried, (group) => group.wastedMs),
  };
}
