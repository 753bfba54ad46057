import type { SeriesPoint } from '@errata/domain';
import type { Series } from './components/chart';

export interface SeriesResponse {
  readonly from: string;
  readonly to: string;
  readonly step: 'hour' | 'day';
  readonly points: readonly SeriesPoint[];
}

/** The bucket starts, the x axis of every time chart. */
export const bucketsOf = (series: SeriesResponse): string[] => series.points.map((point) => point.from);

export const seriesOf = (
  series: SeriesResponse,
  name: string,
  value: (point: SeriesPoint) => number | null,
): Series => ({ name, values: series.points.map(value) });

/** The name of the series that sums the groups past the top ones. */
export const OTHER_SERIES = 'other';

/**
 * One series per key of a per-bucket record (e.g. wasted retries by category): the `top` keys with the largest
 * sums (ties by key), then one `other` series summing the rest, so that a grouping by tool over hundreds of tools
 * stays readable and quick to draw. Keys in a stable order: largest first.
 */
export function stackedSeries(
  series: SeriesResponse,
  record: (point: SeriesPoint) => Readonly<Record<string, number>>,
  top = 8,
): Series[] {
  const totals = new Map<string, number>();
  for (const point of series.points) {
    for (const [key, n] of Object.entries(record(point))) totals.set(key, (totals.get(key) ?? 0) + n);
  }
  const ranked = [...totals]
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0))
    .map(([key]) => key);
  // An "other" of one key would hide a group for nothing: keep it as itself.
  const shown = ranked.length <= top + 1 ? ranked : ranked.slice(0, top);
  const rest = ranked.slice(shown.length);
  const stacked = shown.map((key) => ({
    name: key,
    values: series.points.map((point) => record(point)[key] ?? 0),
  }));
  if (rest.length === 0) return stacked;
  const name = shown.includes(OTHER_SERIES) ? `${OTHER_SERIES} (${rest.length})` : OTHER_SERIES;
  return [
    ...stacked,
    {
      name,
      values: series.points.map((point) => {
        const values = record(point);
        return rest.reduce((sum, key) => sum + (values[key] ?? 0), 0);
      }),
    },
  ];
}
