import { STEP_MS, type SeriesStep } from '@errata/domain';

/**
 * A report window cut into what the rollups hold: whole UTC days, whole hours, and the partial hours at its
 * edges, read from the contributions themselves. Ranges are [from, to); null is unbounded.
 *
 * The caller first widens an edge to its whole hour when nothing of the report's kind lies between the edge and
 * the hour's boundary (`widenToHours`): a window that ends now has nothing after now, so its current hour comes
 * from the hourly rollup instead of every contribution of the hour.
 */
export interface TimeRange {
  readonly from: Date | null;
  readonly to: Date | null;
}

export interface WindowSlices {
  readonly days: readonly TimeRange[];
  readonly hours: readonly TimeRange[];
  readonly raw: readonly TimeRange[];
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

const floorTo = (time: Date, unit: number): Date => new Date(Math.floor(time.getTime() / unit) * unit);
const ceilTo = (time: Date, unit: number): Date => new Date(Math.ceil(time.getTime() / unit) * unit);
const before = (a: Date | null, b: Date | null): boolean => a === null || b === null || a < b;

export function windowSlices(from: Date | null, to: Date | null): WindowSlices {
  if (!before(from, to)) return { days: [], hours: [], raw: [] };
  const fromHour = from && ceilTo(from, HOUR_MS);
  const toHour = to && floorTo(to, HOUR_MS);
  if (!before(fromHour, toHour)) return { days: [], hours: [], raw: [{ from, to }] };
  const raw: TimeRange[] = [];
  if (from !== null && from < fromHour!) raw.push({ from, to: fromHour });
  if (to !== null && toHour! < to) raw.push({ from: toHour, to });

  const fromDay = fromHour && ceilTo(fromHour, DAY_MS);
  const toDay = toHour && floorTo(toHour, DAY_MS);
  if (!before(fromDay, toDay)) return { days: [], hours: [{ from: fromHour, to: toHour }], raw };
  const hours: TimeRange[] = [];
  if (fromHour !== null && fromHour < fromDay!) hours.push({ from: fromHour, to: fromDay });
  if (toHour !== null && toDay! < toHour) hours.push({ from: toDay, to: toHour });
  return { days: [{ from: fromDay, to: toDay }], hours, raw };
}

/** The hour boundaries around the window's edges: widening to them changes nothing when the gaps hold no data. */
export function hourGaps(
  from: Date | null,
  to: Date | null,
): { before: TimeRange | null; after: TimeRange | null } {
  const fromHour = from && floorTo(from, HOUR_MS);
  const toHour = to && ceilTo(to, HOUR_MS);
  return {
    before: from !== null && fromHour! < from ? { from: fromHour, to: from } : null,
    after: to !== null && to < toHour! ? { from: to, to: toHour } : null,
  };
}

/** One point of a series: a whole UTC hour or day, clipped to the window at its edges (then not `whole`). */
export interface SeriesBucket {
  readonly from: Date;
  readonly to: Date;
  readonly whole: boolean;
}

/** [from, to) cut at every UTC hour or day boundary, in time order. */
export function seriesBuckets(from: Date, to: Date, step: SeriesStep): SeriesBucket[] {
  const unit = STEP_MS[step];
  const buckets: SeriesBucket[] = [];
  for (let start = floorTo(from, unit).getTime(); start < to.getTime(); start += unit) {
    const bucketFrom = new Date(Math.max(start, from.getTime()));
    const bucketTo = new Date(Math.min(start + unit, to.getTime()));
    buckets.push({
      from: bucketFrom,
      to: bucketTo,
      whole: bucketFrom.getTime() === start && bucketTo.getTime() === start + unit,
    });
  }
  return buckets;
}
