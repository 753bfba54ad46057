import type { SeriesPoint } from '@errata/domain';
import { describe, expect, it } from 'vitest';
import { MAX_SERIES_DAYS, seriesFits, stackedSeries, type SeriesResponse } from './series';

const response = (records: Record<string, number>[]): SeriesResponse => ({
  from: '2026-11-30T00:00:00.000Z',
  to: '2026-11-30T02:00:00.000Z',
  step: 'hour',
  keptGroups: [],
  foldedGroups: 0,
  points: records.map((wastedRetriesBy, i) => ({
    from: `2026-11-30T0${i}:00:00.000Z`,
    wastedRetriesBy,
  })) as unknown as SeriesPoint[],
});
const byGroup = (point: SeriesPoint) => point.wastedRetriesBy;

describe('wasted retries stacked by group', () => {
  it('draws the 8 groups with the most wasted retries and one "other" for the rest, the sums unchanged', () => {
    // 210 tools, tool-N wasting N retries in each of two buckets
    const keys = Array.from({ length: 210 }, (_, n) => `srv/tool-${String(n).padStart(3, '0')}`);
    const bucket = Object.fromEntries(keys.map((key, n) => [key, n]));
    const stacked = stackedSeries(response([bucket, bucket]), byGroup);
    expect(stacked.map((s) => s.name)).toEqual([
      ...Array.from({ length: 8 }, (_, i) => `srv/tool-${209 - i}`),
      'other',
    ]);
    const restSum = Array.from({ length: 202 }, (_, n) => n).reduce((a, b) => a + b, 0);
    expect(stacked.at(-1)!.values).toEqual([restSum, restSum]);
    const total = stacked.flatMap((s) => s.values).reduce<number>((a, b) => a + (b ?? 0), 0);
    expect(total).toBe(2 * keys.reduce((sum, _, n) => sum + n, 0));
  });

  it('keeps every group when there are few, largest first', () => {
    const stacked = stackedSeries(response([{ a: 1, b: 5 }, { c: 2 }]), byGroup);
    expect(stacked).toEqual([
      { name: 'b', values: [5, 0] },
      { name: 'c', values: [0, 2] },
      { name: 'a', values: [1, 0] },
    ]);
  });

  it('adds the groups the API folded into "other", and counts them when a group is itself named "other"', () => {
    // The API kept 9 of 12 groups, folded 3 (wasting 7 and 4 in the two buckets).
    const kept = Object.fromEntries(
      Array.from({ length: 9 }, (_, n) => [n === 0 ? 'other' : `k${n}`, 100 - n]),
    );
    const folded = [7, 4];
    const series = response([kept, kept]);
    const stacked = stackedSeries(series, byGroup, {
      values: (point) => folded[series.points.indexOf(point)]!,
      groups: 3,
    });
    expect(stacked.map((s) => s.name)).toEqual([
      'other',
      ...Array.from({ length: 7 }, (_, n) => `k${n + 1}`),
      'other (4)',
    ]);
    expect(stacked.at(-1)!.values).toEqual([92 + 7, 92 + 4]);
  });

  it('given a ninth group kept and none folded, draws it as itself', () => {
    const record = Object.fromEntries(Array.from({ length: 9 }, (_, n) => [`k${n}`, n + 1]));
    expect(stackedSeries(response([record]), byGroup, { values: () => 0, groups: 0 })).toHaveLength(9);
  });

  it('does not fold a single remaining group into "other"', () => {
    const record = Object.fromEntries(Array.from({ length: 9 }, (_, n) => [`k${n}`, n + 1]));
    expect(stackedSeries(response([record]), byGroup).map((s) => s.name)).not.toContain('other');
  });
});

describe('whether the API can chart a window', () => {
  it('counts the UTC days the window touches from its first, as the API cuts it, up to 1,000', () => {
    const from = new Date('2024-01-01T00:00:00Z');
    const days = (n: number) => new Date(from.getTime() + n * 86_400_000);
    expect(seriesFits(from, days(MAX_SERIES_DAYS))).toBe(true);
    expect(seriesFits(from, new Date(days(MAX_SERIES_DAYS).getTime() + 1))).toBe(false);
    // A window starting mid-day touches that day too
    expect(seriesFits(new Date('2024-01-01T12:00:00Z'), days(MAX_SERIES_DAYS))).toBe(true);
    expect(seriesFits(new Date('2024-01-01T12:00:00Z'), new Date(days(MAX_SERIES_DAYS).getTime() + 1))).toBe(
      false,
    );
  });
});
