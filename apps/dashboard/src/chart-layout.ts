/** Space taken above a chart's plot: the legend's line when there are several series, else a margin. */
export const plotTop = (seriesCount: number): number => (seriesCount > 1 ? 36 : 16);

/** Height of the x axis' labels and the bottom margin under the plot. */
const BELOW_PLOT = 28;

/** Least vertical room one value-axis label needs so that neighbours do not touch (12 px text). */
const LABEL_ROOM = 25;

/**
 * How many intervals the value axis is split into: ECharts' default of 5 drew 8 labels, touching each other, on the
 * overview's 120 px charts. ECharts rounds to nice numbers, so this is a hint it keeps to within one interval.
 */
export const valueAxisSplits = (height: number, seriesCount: number): number =>
  Math.min(5, Math.max(2, Math.floor((height - plotTop(seriesCount) - BELOW_PLOT) / LABEL_ROOM)));

/**
 * The step of a 0–100 % axis split into at most `splits` intervals. Its maximum is fixed at 100 %, where ECharts' nice
 * step for three (30 %) put a 90 % label into the 100 % one.
 */
export const percentAxisInterval = (splits: number): number => (splits >= 5 ? 0.2 : splits >= 4 ? 0.25 : 0.5);
