import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seriesLength } from '@errata/domain';
import { hourGaps, seriesBuckets, windowSlices, type TimeRange } from './window-slices';

const at = (iso: string) => new Date(iso);
const HOUR = 3_600_000;

describe('windowSlices', () => {
  it('given a window inside one hour, everything is read raw', () => {
    expect(windowSlices(at('2026-11-30T10:05:00Z'), at('2026-11-30T10:55:00Z'))).toEqual({
      days: [],
      hours: [],
      raw: [{ from: at('2026-11-30T10:05:00Z'), to: at('2026-11-30T10:55:00Z') }],
    });
  });

  it('given 24 hours from mid-hour, partial hours raw and whole hours from the hourly rollup', () => {
    expect(windowSlices(at('2026-11-29T10:30:00Z'), at('2026-11-30T10:30:00Z'))).toEqual({
      days: [],
      hours: [{ from: at('2026-11-29T11:00:00Z'), to: at('2026-11-30T10:00:00Z') }],
      raw: [
        { from: at('2026-11-29T10:30:00Z'), to: at('2026-11-29T11:00:00Z') },
        { from: at('2026-11-30T10:00:00Z'), to: at('2026-11-30T10:30:00Z') },
      ],
    });
  });

  it('given 30 days, whole days from the daily rollup and the hours around them', () => {
    expect(windowSlices(at('2026-10-31T10:30:00Z'), at('2026-11-30T10:30:00Z'))).toEqual({
      days: [{ from: at('2026-11-01T00:00:00Z'), to: at('2026-11-30T00:00:00Z') }],
      hours: [
        { from: at('2026-10-31T11:00:00Z'), to: at('2026-11-01T00:00:00Z') },
        { from: at('2026-11-30T00:00:00Z'), to: at('2026-11-30T10:00:00Z') },
      ],
      raw: [
        { from: at('2026-10-31T10:30:00Z'), to: at('2026-10-31T11:00:00Z') },
        { from: at('2026-11-30T10:00:00Z'), to: at('2026-11-30T10:30:00Z') },
      ],
    });
  });

  it('given no bounds, every day; given one bound, the days reach out unbounded', () => {
    expect(windowSlices(null, null)).toEqual({ days: [{ from: null, to: null }], hours: [], raw: [] });
    expect(windowSlices(at('2026-11-30T10:30:00Z'), null)).toEqual({
      days: [{ from: at('2026-12-01T00:00:00Z'), to: null }],
      hours: [{ from: at('2026-11-30T11:00:00Z'), to: at('2026-12-01T00:00:00Z') }],
      raw: [{ from: at('2026-11-30T10:30:00Z'), to: at('2026-11-30T11:00:00Z') }],
    });
  });

  it('given an empty or inverted window, nothing', () => {
    const t = at('2026-11-30T10:30:00Z');
    expect(windowSlices(t, t)).toEqual({ days: [], hours: [], raw: [] });
    expect(windowSlices(t, at('2026-11-29T10:30:00Z'))).toEqual({ days: [], hours: [], raw: [] });
  });

  it('covers every instant of the window exactly once, with aligned day and hour buckets', () => {
    const covers = (range: TimeRange, t: number) =>
      (range.from === null || range.from.getTime() <= t) && (range.to === null || t < range.to.getTime());
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 90 * 24 * HOUR }),
        fc.integer({ min: 0, max: 40 * 24 * HOUR }),
        fc.array(fc.integer({ min: -2 * 24 * HOUR, max: 45 * 24 * HOUR }), { maxLength: 30 }),
        (start, length, probes) => {
          const from = new Date(Date.UTC(2026, 0, 1) + start);
          const to = new Date(from.getTime() + length);
          const slices = windowSlices(from, to);
          for (const range of slices.days)
            for (const edge of [range.from, range.to]) expect(edge!.getTime() % (24 * HOUR)).toBe(0);
          for (const range of slices.hours)
            for (const edge of [range.from, range.to]) expect(edge!.getTime() % HOUR).toBe(0);
          for (const probe of probes) {
            const t = from.getTime() + probe;
            const hits = [...slices.days, ...slices.hours, ...slices.raw].filter((r) => covers(r, t)).length;
            expect(hits).toBe(t >= from.getTime() && t < to.getTime() ? 1 : 0);
          }
        },
      ),
    );
  });

  it('hourGaps: the stretches between each edge and its hour boundary, none when the edge is on one', () => {
    expect(hourGaps(at('2026-11-30T10:05:00Z'), at('2026-11-30T12:30:00Z'))).toEqual({
      before: { from: at('2026-11-30T10:00:00Z'), to: at('2026-11-30T10:05:00Z') },
      after: { from: at('2026-11-30T12:30:00Z'), to: at('2026-11-30T13:00:00Z') },
    });
    expect(hourGaps(at('2026-11-30T10:00:00Z'), null)).toEqual({ before: null, after: null });
  });
});

describe('seriesBuckets', () => {
  it('given a window from mid-hour, the edge hours are clipped and not whole', () => {
    expect(seriesBuckets(at('2026-11-30T10:30:00Z'), at('2026-11-30T12:15:00Z'), 'hour')).toEqual([
      { from: at('2026-11-30T10:30:00Z'), to: at('2026-11-30T11:00:00Z'), whole: false },
      { from: at('2026-11-30T11:00:00Z'), to: at('2026-11-30T12:00:00Z'), whole: true },
      { from: at('2026-11-30T12:00:00Z'), to: at('2026-11-30T12:15:00Z'), whole: false },
    ]);
  });

  it('given whole days, every bucket is a whole UTC day', () => {
    const buckets = seriesBuckets(at('2026-11-01T00:00:00Z'), at('2026-11-04T00:00:00Z'), 'day');
    expect(buckets.map((b) => [b.from.toISOString(), b.whole])).toEqual([
      ['2026-11-01T00:00:00.000Z', true],
      ['2026-11-02T00:00:00.000Z', true],
      ['2026-11-03T00:00:00.000Z', true],
    ]);
  });

  it('tiles any window exactly: adjacent, in order, each inside one step', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 * 24 * HOUR }),
        fc.integer({ min: 1, max: 10 * 24 * HOUR }),
        fc.constantFrom('hour' as const, 'day' as const),
        (offset, length, step) => {
          const from = new Date(Date.UTC(2026, 9, 1) + offset);
          const to = new Date(from.getTime() + length);
          const buckets = seriesBuckets(from, to, step);
          expect(seriesLength(from, to, step)).toBe(buckets.length);
          expect(buckets[0]!.from).toEqual(from);
          expect(buckets.at(-1)!.to).toEqual(to);
          const unit = step === 'hour' ? HOUR : 24 * HOUR;
          buckets.forEach((bucket, i) => {
            if (i > 0) expect(bucket.from).toEqual(buckets[i - 1]!.to);
            expect(Math.floor(bucket.from.getTime() / unit)).toBe(
              Math.floor((bucket.to.getTime() - 1) / unit),
            );
            expect(bucket.whole).toBe(bucket.to.getTime() - bucket.from.getTime() === unit);
          });
        },
      ),
    );
  });
});
