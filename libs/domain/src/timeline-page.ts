/**
 * Pages of a trace's timeline: bounded slices of its items in start order, read on with a keyset cursor (the start
 * and span id of the item a page ends or begins with) so that a page read later, after more items arrived, neither
 * repeats nor skips one. Pure.
 */

/** Items a timeline page holds unless asked for fewer, and at most (`limit`). */
export const TIMELINE_PAGE_DEFAULT = 200;
export const TIMELINE_PAGE_MAX = 1000;

/**
 * Runs a timeline page lists at most: a trace of a coordinator fanning out to thousands of subagents would
 * otherwise list every one of them on every page. The page lists the stretch of this many holding its run.
 */
export const TIMELINE_RUNS_PAGE = 100;

/** An item's place in the timeline's order: by start (nanoseconds), then span id. */
export interface TimelineKey {
  readonly startNs: bigint;
  readonly spanId: string;
}

/** Where a page starts: the first, after or before a cursor, or the page holding one item (`span`). */
export type TimelinePosition =
  | { readonly from: 'start' }
  | { readonly from: 'after'; readonly cursor: TimelineKey }
  | { readonly from: 'before'; readonly cursor: TimelineKey }
  | { readonly from: 'span'; readonly spanId: string };

export interface TimelinePageRequest {
  readonly limit: number;
  /** Only this run's items; null: the whole trace's. */
  readonly run: string | null;
  readonly position: TimelinePosition;
  /**
   * The position of the first run to list (`TIMELINE_RUNS_PAGE` of them); absent or null: the stretch holding the
   * page's run (`run`, else that of its first item).
   */
  readonly runOffset?: number | null;
}

export interface TimelinePageInfo {
  readonly limit: number;
  readonly run: string | null;
  /** Items of the trace (of `run`, when given) in all. */
  readonly total: number;
  /** The position of the page's first item among them, from 0. */
  readonly offset: number;
  /** Pass as `before` to read the items just before this page; null at the first. */
  readonly before: string | null;
  /** Pass as `after` to read the items just after this page; null at the last. */
  readonly after: string | null;
}

/** A cursor as the API hands it out: the item's start in nanoseconds and its span id. Opaque to clients. */
export const timelineCursor = (key: TimelineKey): string => `${key.startNs}.${key.spanId}`;

const CURSOR = /^(\d{1,20})\.([0-9a-f]{1,64})$/;

/** The key a cursor names; null for text no page handed out. */
export function parseTimelineCursor(text: string): TimelineKey | null {
  const match = CURSOR.exec(text);
  return match === null ? null : { startNs: BigInt(match[1]!), spanId: match[2]! };
}

/** Orders items as the timeline does: by start, then span id. */
export function byTimelineKey(a: TimelineKey, b: TimelineKey): number {
  if (a.startNs !== b.startNs) return a.startNs < b.startNs ? -1 : 1;
  return a.spanId < b.spanId ? -1 : a.spanId > b.spanId ? 1 : 0;
}

/** The index of the first of `ordered` that `isPast` holds for (they are sorted, so it holds for all after). */
function firstWhere<T>(ordered: readonly T[], isPast: (item: T) => boolean): number {
  let [low, high] = [0, ordered.length];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (isPast(ordered[middle]!)) high = middle;
    else low = middle + 1;
  }
  return low;
}

/**
 * The page `request` asks for of `ordered` (sorted by `byTimelineKey`), with where it lies; null when it asks for
 * the page of a span none of the items (of the run, when given) has. The page holding a span is the one a walk from
 * the start with the same limit reaches it in, so that its `before` and `after` read on along the same pages.
 */
export function pageOf<T extends TimelineKey & { readonly runId: string }>(
  ordered: readonly T[],
  request: TimelinePageRequest,
): { items: T[]; page: TimelinePageInfo } | null {
  const { limit, run, position } = request;
  const scoped = run === null ? ordered : ordered.filter((item) => item.runId === run);
  let start: number;
  let end: number;
  switch (position.from) {
    case 'start':
      [start, end] = [0, limit];
      break;
    case 'after':
      start = firstWhere(scoped, (item) => byTimelineKey(item, position.cursor) > 0);
      end = start + limit;
      break;
    case 'before':
      end = firstWhere(scoped, (item) => byTimelineKey(item, position.cursor) >= 0);
      start = Math.max(0, end - limit);
      break;
    case 'span': {
      const index = scoped.findIndex((item) => item.spanId === position.spanId);
      if (index === -1) return null;
      start = index - (index % limit);
      end = start + limit;
      break;
    }
  }
  const items = scoped.slice(start, end);
  const [first, last] = [items[0], items.at(-1)];
  return {
    items,
    page: {
      limit,
      run,
      total: scoped.length,
      offset: Math.min(start, scoped.length),
      before: first !== undefined && start > 0 ? timelineCursor(first) : null,
      after: last !== undefined && start + items.length < scoped.length ? timelineCursor(last) : null,
    },
  };
}
