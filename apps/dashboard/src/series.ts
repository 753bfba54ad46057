import type { SeriesPoint } from '@errata/domain';
import { MAX_SERIES_POINTS, seriesLength } from '@errata/domain/series-length';
import type { Series } from './components/chart';

export interface SeriesResponse {
  readonly from: string;
  readonly to: string;
  readonly step: 'hour' | 'day';
  /** The breakdown's groups the API kept (its `groupLimit`) and how many it folded into the points' `folded…`. */
  readonly keptGroups: readonly string[];
  readonly foldedGroups: number;
  readonly points: readonly SeriesPoint[];
}

/** The longest window the API charts: MAX_SERIES_POINTS of its longest step, days. */
export const MAX_SERIES_DAYS = MAX_SERIES_POINTS;

/** Whether the API can chart the window: the UTC days it touches, from `from`'s day on, are at most MAX_SERIES_DAYS. */
export const seriesFits = (from: Date, to: Date): boolean => seriesLength(from, to, 'day') <= MAX_SERIES_DAYS;

/** The series of a window too long to chart: no points. */
export const noSeries = (from: Date, to: Date): SeriesResponse => ({
  from: from.toISOString(),
  to: to.toISOString(),
  step: 'day',
  keptGroups: [],
  foldedGroups: 0,
  points: [],
});

/** The bucket starts, the x axis of every time chart. */
export const bucketsOf = (series: SeriesResponse): string[] => series.points.map((point) => point.from);

export const seriesOf = (
  series: SeriesResponse,
  name: string,
  value: (point: SeriesPoint) => number | null,
): Series => ({ name, values: series.points.map(value) });

/** The name of the series that sums the groups past the top ones. */
export const OTHER_SERIES = 'other';

/** Groups a stacked chart draws as themselves; the API is asked for one more (see `stackedSeries`). */
export const STACKED_GROUPS = 8;

/** What the API folded of a breakdown: each point's sum of the groups past its kept ones, and how many there were. */
export interface FoldedGroups {
  readonly values: (point: SeriesPoint) => number;
  readonly groups: number;
}

/**
 * One series per key of a per-bucket record (e.g. wasted retries by category): the `top` keys with the largest
 * sums (ties by key), then one `other` series summing the rest and what the API already folded (`folded`), so that
 * a grouping by tool over hundreds of tools stays readable and quick to draw. Keys in a stable order: largest first.
 */
export function stackedSeries(
  series: SeriesResponse,
  record: (point: SeriesPoint) => Readonly<Record<string, number>>,
  folded: FoldedGroups = { values: () => 0, groups: 0 },
  top = STACKED_GROUPS,
): Series[] {
  const totals = new Map<string, number>();
  for (const point of series.points) {
    for (const [key, n] of Object.entries(record(point))) totals.set(key, (totals.get(key) ?? 0) + n);
  }
  const ranked = [...totals]
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0))
    .map(([key]) => key);
  // An "other" of one key would hide a group for nothing: keep it as itself.
  const shown = ranked.length + folded.groups <= top + 1 ? ranked : ranked.slice(0, top);
  const rest = ranked.slice(shown.length);
  const stacked = shown.map((key) => ({
    name: key,
    values: series.points.map((point) => record(point)[key] ?? 0),
  }));
  const others = rest.length + folded.groups;
  if (others === 0) return stacked;
  const name = shown.includes(OTHER_SERIES) ? `${OTHER_SERIES} (${others})` : OTHER_SERIES;
  return [
    ...stacked,
    {
      name,
      values: series.points.map((point) => {
        const values = record(point);
        return rest.reduce((sum, key) => sum + (values[key] ?? 0), folded.values(point));
      }),
    },
  ];
}
