import { describe, expect, it } from 'vitest';
import { durationAxisInterval, percentAxisInterval, timeAxisLabels, valueAxisSplits } from './chart-layout';
import { formatDuration } from './format';

describe('valueAxisSplits', () => {
  it("keeps ECharts' five intervals where there is room for them", () => {
    expect(valueAxisSplits(220, 1)).toBe(5);
    expect(valueAxisSplits(220, 3)).toBe(5);
  });

  it("splits a small chart's axis into fewer intervals, so that its labels do not touch", () => {
    // The overview's cards: 120 px.
    expect(valueAxisSplits(120, 1)).toBe(3);
    expect(valueAxisSplits(120, 2)).toBe(2);
  });

  it('never goes below two intervals', () => {
    expect(valueAxisSplits(40, 1)).toBe(2);
  });
});

describe('percentAxisInterval', () => {
  it('steps a 0–100 % axis so that its last label is 100 % and no label lands beside it', () => {
    for (const splits of [2, 3, 4, 5]) {
      const step = percentAxisInterval(splits);
      expect(1 / step).toBeLessThanOrEqual(Math.max(splits, 2));
      expect(Number.isInteger(Math.round((1 / step) * 1e9) / 1e9)).toBe(true);
    }
    expect(percentAxisInterval(3)).toBe(0.5);
    expect(percentAxisInterval(5)).toBe(0.2);
  });
});

describe('durationAxisInterval', () => {
  /** The labels of an axis from 0 past `maxMs` in steps of `step`, as the overview's chart says them. */
  const labels = (maxMs: number, step: number) =>
    Array.from({ length: Math.ceil(maxMs / step) + 1 }, (_, i) => formatDuration(i * step));

  it('steps a month of wasted retries (millions of ms) in whole minutes or hours, each label a whole unit', () => {
    // 30 days at 300,000 events: about 2.2 million ms in the busiest bucket, on the overview's 3 intervals.
    expect(durationAxisInterval(2_200_000, 3)).toBe(900_000);
    expect(labels(2_200_000, 900_000)).toEqual(['0 ms', '15 min', '30 min', '45 min']);
    expect(labels(20_000_000, durationAxisInterval(20_000_000, 3)!)).toEqual(['0 ms', '2 h', '4 h', '6 h']);
  });

  it('keeps to at most `splits` intervals, each label a short duration, from milliseconds to days', () => {
    for (const maxMs of [3, 740, 4_321, 61_000, 2_999_999, 9_000_000, 400_000_000, 1_000_000_000]) {
      for (const splits of [2, 3, 5]) {
        const step = durationAxisInterval(maxMs, splits)!;
        expect(Math.ceil(maxMs / step)).toBeLessThanOrEqual(splits);
        for (const label of labels(maxMs, step)) expect(label).toMatch(/^\d{1,3}(\.\d)? (ms|s|min|h)$/);
      }
    }
  });

  it('leaves an axis with nothing above zero to ECharts', () => {
    expect(durationAxisInterval(0, 3)).toBeUndefined();
    expect(durationAxisInterval(Number.NaN, 3)).toBeUndefined();
  });
});

describe('timeAxisLabels', () => {
  const hours = (from: string, n: number) =>
    Array.from({ length: n }, (_, i) => new Date(Date.parse(from) + i * 3_600_000).toISOString());
  const days = (first: string, from: string, n: number) => [
    first,
    ...Array.from({ length: n }, (_, i) => new Date(Date.parse(from) + i * 86_400_000).toISOString()),
  ];

  it('says the time alone within a day, and the date and time over hourly buckets of several', () => {
    const day = hours('2026-12-02T00:00:00.000Z', 24);
    expect(timeAxisLabels(day)(day[13]!)).toBe('13:00');
    const threeDays = hours('2026-11-30T11:00:00.000Z', 72);
    expect(timeAxisLabels(threeDays)(threeDays[13]!)).toBe('12-01 00:00');
  });

  it('says the date alone for daily buckets, each of which starts at 00:00', () => {
    // 30 days: the window's own start, then whole days
    const month = days('2026-11-02T11:48:00.000Z', '2026-11-03T00:00:00.000Z', 30);
    const label = timeAxisLabels(month);
    expect(label(month[0]!)).toBe('11-02');
    expect(label(month[9]!)).toBe('11-11');
  });

  it('says the year as well when the buckets span more than one, so that the ends of a year tell apart', () => {
    const year = days('2025-12-02T11:00:00.000Z', '2025-12-03T00:00:00.000Z', 365);
    const label = timeAxisLabels(year);
    expect(label(year[0]!)).toBe('2025-12-02');
    expect(label(year[year.length - 1]!)).toBe('2026-12-02');
  });
});
