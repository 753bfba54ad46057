/**
 * The reports' headline figures per time bucket, for charts, with wasted retries broken down as the retry-waste
 * report groups them. Each point is shaped by the reports' own shapers
 * from the sums of its bucket, so a point equals what the reports answer for that bucket's window. Pure.
 */
import { compareText } from './report-order';
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
  /**
   * Wasted retries and their time of the groups `boundSeriesGroups` folded (those past the series' top groups), so
   * that `wastedRetriesBy` and `foldedWastedRetries` add up to `wastedRetries` (and likewise for the time).
   */
  readonly foldedWastedRetries: number;
  readonly foldedWastedMs: number;
}

/** Groups whose keys read alike (a server and a tool named with "/") add up under that key. */
function sumByKey(groups: readonly RetryWasteGroup[], value: (group: RetryWasteGroup) => number) {
  const sums = new Map<string, number>();
  for (const group of groups) sums.set(group.key, (sums.get(group.key) ?? 0) + value(group));
  return Object.fromEntries(sums);
}

/**
 * What a read that cut a bucket's groups (`boundSeriesGroups`' rule, in SQL) gives beside the kept groups' rows: the
 * sums over all of the bucket's rows, and the wasted retries and time of the groups it folded (each group's time
 * rounded as the report rounds it, then added up).
 */
export interface FoldedSeriesSums {
  readonly totalRows: readonly CallSums[];
  readonly wastedRetries: number;
  readonly wastedMs: number;
}

/**
 * A bucket's point from its sums: `calls` grouped by the retry-waste grouping's dimensions (at least), all of them or,
 * with `folded`, only the kept groups' rows.
 */
export function seriesPointFromSums(
  window: { readonly from: Date; readonly to: Date },
  calls: readonly CallSums[],
  reports: readonly ReportSums[],
  groupBy: RetryWasteGroupBy = 'category',
  folded: FoldedSeriesSums = { totalRows: calls, wastedRetries: 0, wastedMs: 0 },
): SeriesPoint {
  // A point counts; it shows no wasted retries.
  const retryWaste = retryWasteFromSums(calls, groupBy, () => [], folded.totalRows);
  const { totals: escalations } = escalationsFromSums(folded.totalRows);
  const coverage = subagentCoverageFromSums(reports, folded.totalRows);
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
    foldedWastedRetries: folded.wastedRetries,
    foldedWastedMs: folded.wastedMs,
  };
}

/** Groups a series keeps by default, and at most (`groupLimit`). */
export const DEFAULT_SERIES_GROUPS = 10;
export const MAX_SERIES_GROUPS = 100;

export interface BoundedSeries {
  /** The groups kept, most wasted retries over the window first (ties by key). */
  readonly keptGroups: readonly string[];
  /** How many other groups had retries in the window: their figures are each point's `folded…` ones. */
  readonly foldedGroups: number;
  readonly points: readonly SeriesPoint[];
}

/**
 * A series' breakdown cut to its top `limit` groups over the whole window (most wasted retries, ties by key), the
 * rest folded into each point's `foldedWastedRetries` / `foldedWastedMs`: grouped by tool, every point carried a key
 * per tool the project has, thousands of them, where a chart draws a few and one "other". The groups are the same in
 * every point, so a kept group's bars are whole, and each point still adds up to its totals.
 *
 * The points may come cut already, by this same rule, by the read (`RollupQueryRepository.seriesSums` ranks and cuts
 * in SQL so that thousands of groups are not read out): their `folded…` figures then hold the groups it folded,
 * `foldedBefore` of them, and cutting again keeps what is left. The SQL repeats this order; change both together.
 */
export function boundSeriesGroups(
  points: readonly SeriesPoint[],
  limit: number,
  foldedBefore = 0,
): BoundedSeries {
  const totals = new Map<string, number>();
  for (const point of points) {
    for (const [key, n] of Object.entries(point.wastedRetriesBy)) totals.set(key, (totals.get(key) ?? 0) + n);
  }
  const ranked = [...totals].sort(([a, x], [b, y]) => y - x || compareText(a, b)).map(([key]) => key);
  const keptGroups = ranked.slice(0, limit);
  const kept = new Set(keptGroups);
  const split = (record: Readonly<Record<string, number>>) => {
    const shown: Record<string, number> = {};
    let folded = 0;
    for (const [key, n] of Object.entries(record)) {
      if (kept.has(key)) shown[key] = n;
      else folded += n;
    }
    return { shown, folded };
  };
  return {
    keptGroups,
    foldedGroups: foldedBefore + ranked.length - keptGroups.length,
    points: points.map((point) => {
      const retries = split(point.wastedRetriesBy);
      const ms = split(point.wastedMsBy);
      return {
        ...point,
        wastedRetriesBy: retries.shown,
        wastedMsBy: ms.shown,
        foldedWastedRetries: point.foldedWastedRetries + retries.folded,
        foldedWastedMs: point.foldedWastedMs + ms.folded,
      };
    }),
  };
}
