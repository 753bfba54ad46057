import { describe, expect, it } from 'vitest';
import { reportCall } from './fixtures.spec-helper';
import { contributionsInMemory, sumContributions, traceFactsOfCalls } from './report-contributions';
import { boundSeriesGroups, seriesPointFromSums, type SeriesPoint } from './report-series';

/** A transient failure retried to success, and a validation failure retried blindly (wasted): their sums. */
function recoveredAndWastedSums() {
  const calls = [
    reportCall('c1', 0, 'tool_error', 'transient', { argsHash: 'a' }),
    reportCall('c2', 2_000, 'ok', null, { argsHash: 'a' }),
    reportCall('c3', 10_000, 'tool_error', 'validation', { argsHash: 'b', tool: 'refund' }),
    reportCall('c4', 10_500, 'tool_error', 'validation', { argsHash: 'b', tool: 'refund' }),
  ];
  return sumContributions(contributionsInMemory(traceFactsOfCalls(calls)));
}

describe('seriesPointFromSums', () => {
  it('given a recovered transient retry and a wasted blind retry, gives the headline figures of the bucket', () => {
    const sums = recoveredAndWastedSums();
    const window = { from: new Date('2026-01-01T00:00:00Z'), to: new Date('2026-01-01T01:00:00Z') };
    expect(seriesPointFromSums(window, sums.calls, sums.reports)).toEqual({
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-01-01T01:00:00.000Z',
      calls: 4,
      failures: 3,
      failureRate: 0.75,
      retries: 2,
      wastedRetries: 1,
      wastedMs: 100,
      unrecoveredChains: 1,
      escalations: 0,
      avoidableEscalations: 0,
      subagentReports: 0,
      meanCoverage: null,
      wastedRetriesBy: { transient: 0, validation: 1 },
      wastedMsBy: { transient: 0, validation: 100 },
      foldedWastedRetries: 0,
      foldedWastedMs: 0,
    });
    expect(seriesPointFromSums(window, sums.calls, sums.reports, 'tool').wastedRetriesBy).toEqual({
      'support-server/lookup_order': 0,
      'support-server/refund': 1,
    });
  });

  it("given only the kept groups' rows with the totals and the folded figures, gives the whole point", () => {
    const sums = recoveredAndWastedSums();
    const window = { from: new Date('2026-01-01T00:00:00Z'), to: new Date('2026-01-01T01:00:00Z') };
    const whole = seriesPointFromSums(window, sums.calls, sums.reports);
    const kept = sums.calls.filter((row) => row.category === 'transient');
    const folded = { totalRows: sums.calls, wastedRetries: 1, wastedMs: 100 };
    expect(seriesPointFromSums(window, kept, sums.reports, 'category', folded)).toEqual({
      ...whole,
      wastedRetriesBy: { transient: 0 },
      wastedMsBy: { transient: 0 },
      foldedWastedRetries: 1,
      foldedWastedMs: 100,
    });
  });

  it('given two server/tool pairs whose keys read alike, adds their wasted retries up under that key', () => {
    const calls = [
      reportCall('a1', 0, 'tool_error', 'business', { server: 'acme/files', tool: 'read' }),
      reportCall('a2', 1_000, 'tool_error', 'business', { server: 'acme/files', tool: 'read' }),
      reportCall('b1', 0, 'tool_error', 'business', { server: 'acme', tool: 'files/read', traceId: 't2' }),
      reportCall('b2', 1_000, 'tool_error', 'business', {
        server: 'acme',
        tool: 'files/read',
        traceId: 't2',
      }),
    ];
    const sums = sumContributions(contributionsInMemory(traceFactsOfCalls(calls)));
    const window = { from: new Date('2026-01-01T00:00:00Z'), to: new Date('2026-01-01T01:00:00Z') };
    expect(seriesPointFromSums(window, sums.calls, sums.reports, 'tool').wastedRetriesBy).toEqual({
      'acme/files/read': 2,
    });
  });

  it('given an empty bucket, counts zero and leaves the rates null', () => {
    const window = { from: new Date(0), to: new Date(3_600_000) };
    expect(seriesPointFromSums(window, [], [])).toMatchObject({
      calls: 0,
      failureRate: null,
      meanCoverage: null,
      wastedRetriesBy: {},
    });
  });
});

describe('boundSeriesGroups', () => {
  /** A point wasting `by[key]` retries of 10 ms each per group. */
  const point = (hour: number, by: Record<string, number>): SeriesPoint => {
    const window = { from: new Date(hour * 3_600_000), to: new Date((hour + 1) * 3_600_000) };
    const wasted = Object.values(by).reduce((a, b) => a + b, 0);
    return {
      ...seriesPointFromSums(window, [], []),
      wastedRetries: wasted,
      wastedMs: 10 * wasted,
      wastedRetriesBy: by,
      wastedMsBy: Object.fromEntries(Object.entries(by).map(([key, n]) => [key, 10 * n])),
    };
  };
  const sum = (record: Readonly<Record<string, number>>) => Object.values(record).reduce((a, b) => a + b, 0);

  it('given 2,000 groups, keeps the top ones over the whole window and folds the rest, each point adding up', () => {
    // g-N wastes N retries in hour 0 and one more in hour 1 when N is even.
    const keys = Array.from({ length: 2_000 }, (_, n) => `srv/g-${String(n).padStart(4, '0')}`);
    const points = [
      point(0, Object.fromEntries(keys.map((key, n) => [key, n]))),
      point(1, Object.fromEntries(keys.filter((_, n) => n % 2 === 0).map((key) => [key, 1]))),
      point(2, {}),
    ];
    const bounded = boundSeriesGroups(points, 5);
    // 1999 + 0, 1998 + 1 tie 1999: by key
    expect(bounded.keptGroups).toEqual([
      'srv/g-1998',
      'srv/g-1999',
      'srv/g-1996',
      'srv/g-1997',
      'srv/g-1994',
    ]);
    expect(bounded.foldedGroups).toBe(1_995);
    expect(bounded.points.map((p) => Object.keys(p.wastedRetriesBy).length)).toEqual([5, 3, 0]);
    for (const p of bounded.points) {
      expect(sum(p.wastedRetriesBy) + p.foldedWastedRetries).toBe(p.wastedRetries);
      expect(sum(p.wastedMsBy) + p.foldedWastedMs).toBe(p.wastedMs);
    }
    expect(bounded.points[1]).toMatchObject({ foldedWastedRetries: 997, foldedWastedMs: 9_970 });
    expect(bounded.points[1]!.wastedRetriesBy).toEqual({ 'srv/g-1998': 1, 'srv/g-1996': 1, 'srv/g-1994': 1 });
  });

  it('given points a read cut already by the same rule, cuts them as if they came whole', () => {
    const keys = Array.from({ length: 40 }, (_, n) => `g-${n % 7}-${n}`);
    const points = [
      point(0, Object.fromEntries(keys.map((key, n) => [key, n % 5]))),
      point(1, Object.fromEntries(keys.filter((_, n) => n % 3 === 0).map((key) => [key, 2]))),
    ];
    const read = boundSeriesGroups(points, 8);
    expect(read.foldedGroups).toBe(32);
    expect(boundSeriesGroups(read.points, 8, read.foldedGroups)).toEqual(read);
    expect(boundSeriesGroups(read.points, 3, read.foldedGroups)).toEqual(boundSeriesGroups(points, 3));
  });

  it('given no more groups than the limit, keeps them all and folds nothing', () => {
    const points = [point(0, { b: 2, a: 2 }), point(1, { c: 0 })];
    const bounded = boundSeriesGroups(points, 3);
    expect(bounded).toEqual({ keptGroups: ['a', 'b', 'c'], foldedGroups: 0, points });
  });
});
