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

/** One series per key of a per-bucket record (e.g. wasted retries by category), keys in a stable order. */
export function stackedSeries(
  series: SeriesResponse,
  record: (point: SeriesPoint) => Readonly<Record<string, number>>,
): Series[] {
  const keys = [...new Set(series.points.flatMap((point) => Object.keys(record(point))))].sort();
  return keys.map((key) => ({ name: key, values: series.points.map((point) => record(point)[key] ?? 0) }));
}
