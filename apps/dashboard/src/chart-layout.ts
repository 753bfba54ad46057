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

/** The steps a duration axis may take, ms: whole units a reader counts in (5 s, 15 min, 6 h), then whole days. */
const DURATION_STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000,
  600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000,
];
const DAY_MS = 86_400_000;

/**
 * The step of a duration axis (milliseconds) whose highest value is `maxMs`, split into at most `splits` intervals: a
 * whole unit, so that each label reads as one ("20 min", "40 min", "1 h"). ECharts' own nice numbers are decimal:
 * over a month of wasted retries they were 1,000,000 ms apart, labelled "16.7 min" or, unformatted, "1,000,000".
 * Undefined for an axis with nothing above zero, which ECharts steps by itself.
 */
export function durationAxisInterval(maxMs: number, splits: number): number | undefined {
  if (!(maxMs > 0)) return undefined;
  const least = maxMs / Math.max(1, splits);
  const step = DURATION_STEPS.find((candidate) => candidate >= least);
  if (step !== undefined) return step;
  const days = least / DAY_MS;
  const magnitude = 10 ** Math.floor(Math.log10(days));
  return ([1, 2, 5, 10].map((n) => n * magnitude).find((n) => n >= days) ?? 10 * magnitude) * DAY_MS;
}

/**
 * How a time axis labels its buckets (their ISO starts, `x`): the time alone within one UTC day; over several, the date
 * too, and only the date for daily buckets (each starts at 00:00); the year as well when the buckets span more than one.
 * Without them, a custom range of a year read "12-02 11:00 … 12-02 00:00" at its two ends, and every day "… 00:00".
 */
export function timeAxisLabels(x: readonly string[]): (iso: string) => string {
  const first = x[0];
  const last = x[x.length - 1];
  if (first === undefined || last === undefined || first.slice(0, 10) === last.slice(0, 10))
    return (iso) => iso.slice(11, 16);
  const daily = x.length > 1 && Date.parse(last) - Date.parse(x[x.length - 2]!) >= DAY_MS;
  const date =
    first.slice(0, 4) === last.slice(0, 4)
      ? (iso: string) => iso.slice(5, 10)
      : (iso: string) => iso.slice(0, 10);
  return daily ? date : (iso) => `${date(iso)} ${iso.slice(11, 16)}`;
}
