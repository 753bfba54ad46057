/**
 * How long a series may be, in one place for the API that refuses a longer one and the dashboard that does not ask
 * for it. No imports: the dashboard's bundle takes this file alone.
 */

/** A series' buckets: whole UTC hours or days. */
export type SeriesStep = 'hour' | 'day';

export const STEP_MS: Readonly<Record<SeriesStep, number>> = { hour: 3_600_000, day: 86_400_000 };

/** Buckets one series may have: a month of hours, or years of days. */
export const MAX_SERIES_POINTS = 1_000;

/** How many buckets of `step` [from, to) is cut into: every UTC hour or day it touches. */
export function seriesLength(from: Date, to: Date, step: SeriesStep): number {
  const unit = STEP_MS[step];
  return Math.max(0, Math.ceil((to.getTime() - Math.floor(from.getTime() / unit) * unit) / unit));
}
