import { describe, expect, it } from 'vitest';
import { pageOf, parseTimelineCursor, timelineCursor, type TimelinePosition } from './timeline-page';

/** Ten items, two to a nanosecond (so that order falls to the span id), alternately of runs a and b. */
const items = Array.from({ length: 10 }, (_, n) => ({
  startNs: BigInt(Math.floor(n / 2)),
  spanId: n.toString(16).padStart(16, '0'),
  runId: n % 2 === 0 ? 'a' : 'b',
}));
const ids = (page: ReturnType<typeof pageOf>) => page!.items.map((item) => Number.parseInt(item.spanId, 16));
const at = (position: TimelinePosition, limit = 4, run: string | null = null) =>
  pageOf(items, { limit, run, position });

describe('pageOf', () => {
  it('given cursors, reads on from the item they name, whichever items came or went', () => {
    const first = at({ from: 'start' });
    expect(ids(first)).toEqual([0, 1, 2, 3]);
    expect(first!.page).toMatchObject({
      total: 10,
      offset: 0,
      before: null,
      after: timelineCursor(items[3]!),
    });
    const next = at({ from: 'after', cursor: parseTimelineCursor(first!.page.after!)! });
    expect(ids(next)).toEqual([4, 5, 6, 7]);
    const last = at({ from: 'after', cursor: parseTimelineCursor(next!.page.after!)! });
    expect(ids(last)).toEqual([8, 9]);
    expect(last!.page).toMatchObject({ offset: 8, after: null, before: timelineCursor(items[8]!) });
    expect(ids(at({ from: 'before', cursor: parseTimelineCursor(last!.page.before!)! }))).toEqual([
      4, 5, 6, 7,
    ]);
    expect(at({ from: 'before', cursor: items[2]! })!.page).toMatchObject({ offset: 0, before: null });
    // Stale: past the end, an empty page that reads on nowhere
    expect(at({ from: 'after', cursor: { startNs: 99n, spanId: 'f' } })!.page).toMatchObject({
      offset: 10,
      before: null,
      after: null,
    });
  });

  it("given a span, answers the page a walk from the start reaches it in; of a run, that run's items only", () => {
    expect(ids(at({ from: 'span', spanId: items[6]!.spanId }))).toEqual([4, 5, 6, 7]);
    expect(ids(at({ from: 'span', spanId: items[6]!.spanId }, 2, 'a'))).toEqual([4, 6]);
    expect(at({ from: 'span', spanId: items[6]!.spanId }, 2, 'a')!.page).toMatchObject({
      total: 5,
      offset: 2,
    });
    expect(at({ from: 'span', spanId: items[7]!.spanId }, 2, 'a')).toBeNull();
  });

  it('refuses text no page handed out as a cursor', () => {
    expect(parseTimelineCursor('12.00000000000000ff')).toEqual({ startNs: 12n, spanId: '00000000000000ff' });
    for (const text of ['', '12', '.ab', '-1.ab', '1.AB', '1.ab.cd'])
      expect(parseTimelineCursor(text)).toBeNull();
  });
});
