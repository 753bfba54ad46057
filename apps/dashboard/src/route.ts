/**
 * Where the user is: the page from the path, and the window and filters from the query string, so that any
 * view can be shared as a link. Navigation uses the History API; the server answers every page path with the app.
 */
import { parseQueryInstant } from '@errata/domain/iso-instant';
import { useEffect, useState } from 'preact/hooks';
import { keepFocus } from './focus';

export type Route =
  | { readonly page: 'overview' }
  | { readonly page: 'retry-waste' }
  | { readonly page: 'misclassified' }
  | { readonly page: 'escalations' }
  | { readonly page: 'subagents' }
  | { readonly page: 'servers' }
  | { readonly page: 'findings' }
  | { readonly page: 'finding'; readonly id: string }
  | { readonly page: 'trace'; readonly traceId: string }
  | { readonly page: 'not-found' };

const SIMPLE_PAGES = [
  'retry-waste',
  'misclassified',
  'escalations',
  'subagents',
  'servers',
  'findings',
] as const;

function parseRoute(pathname: string): Route {
  const parts = pathname.split('/').filter((part) => part !== '');
  if (parts.length === 0) return { page: 'overview' };
  const [first, second] = parts;
  if (parts.length === 1 && (SIMPLE_PAGES as readonly string[]).includes(first!)) {
    return { page: first as (typeof SIMPLE_PAGES)[number] };
  }
  if (parts.length === 2 && first === 'findings') return { page: 'finding', id: decodeURIComponent(second!) };
  if (parts.length === 2 && first === 'traces')
    return { page: 'trace', traceId: decodeURIComponent(second!) };
  return { page: 'not-found' };
}

const NAVIGATED = 'errata:navigated';

/** A count kept in the History API's state of the current entry (it survives reloads); 0 when there is none. */
const stateCount = (key: 'errataDepth' | 'errataOnPage'): number => {
  const value = (history.state as Record<string, unknown> | null)?.[key];
  return typeof value === 'number' ? value : 0;
};
/** How many in-app navigations lie behind the current entry. */
const depth = (): number => stateCount('errataDepth');
/** How many of them stayed on the current page (path): another run of a timeline, another filter. */
const onPage = (): number => stateCount('errataOnPage');

export function navigate(href: string, options: { replace?: boolean } = {}): void {
  // Another page puts focus on its content (app.tsx); the same page keeps it on the control that was used.
  const samePage = new URL(href, location.href).pathname === location.pathname;
  if (samePage) keepFocus();
  if (options.replace) {
    history.replaceState({ errataDepth: depth(), errataOnPage: samePage ? onPage() : 0 }, '', href);
  } else {
    history.pushState({ errataDepth: depth() + 1, errataOnPage: samePage ? onPage() + 1 : 0 }, '', href);
  }
  window.dispatchEvent(new Event(NAVIGATED));
}

/**
 * Whether an in-app page lies behind the current page's entries: false when the page was opened from a link, a
 * bookmark or another site (and then only looked at in other ways, such as another run of a timeline).
 */
export const canGoBackInApp = (): boolean => depth() - onPage() > 0;

/** Back to the page before the current one, past the entries that stayed on it (the runs of a timeline looked at). */
export const goBackToPreviousPage = (): void => history.go(-(onPage() + 1));

/** The current path and query, re-rendering on every navigation (links, back and forward). */
export function useLocation(): { route: Route; query: URLSearchParams; href: string } {
  const [href, setHref] = useState(() => location.pathname + location.search);
  useEffect(() => {
    const update = () => setHref(location.pathname + location.search);
    window.addEventListener('popstate', update);
    window.addEventListener(NAVIGATED, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAVIGATED, update);
    };
  }, []);
  const url = new URL(href, location.origin);
  return { route: parseRoute(url.pathname), query: url.searchParams, href };
}

/** The query string with `changes` applied (null removes a parameter). */
export function withQuery(query: URLSearchParams, changes: Record<string, string | null>): string {
  const next = new URLSearchParams(query);
  for (const [name, value] of Object.entries(changes)) {
    if (value === null || value === '') next.delete(name);
    else next.set(name, value);
  }
  const search = next.toString();
  return search === '' ? '' : `?${search}`;
}

export const RANGES = {
  '1h': { label: 'Last hour', ms: 3_600_000 },
  '24h': { label: 'Last 24 hours', ms: 24 * 3_600_000 },
  '7d': { label: 'Last 7 days', ms: 7 * 24 * 3_600_000 },
  '30d': { label: 'Last 30 days', ms: 30 * 24 * 3_600_000 },
  '90d': { label: 'Last 90 days', ms: 90 * 24 * 3_600_000 },
} as const;
export type RangeName = keyof typeof RANGES;
const DEFAULT_RANGE: RangeName = '24h';

/** The filters in the URL: a named range (relative to now) or explicit `from`/`to`, and server, tool, agent. */
export interface Filters {
  readonly range: RangeName | 'custom';
  readonly from: Date;
  readonly to: Date;
  readonly server: string | null;
  readonly tool: string | null;
  readonly agent: string | null;
  /** What in the URL could not be used as written, and what is shown instead: never silently other figures. */
  readonly notices: readonly string[];
}

const isRange = (value: string | null): value is RangeName => value !== null && Object.hasOwn(RANGES, value);

const RANGE_NAMES = Object.keys(RANGES).join(', ');

/**
 * The window a link names. `from` alone runs to now (the next whole minute); `to` alone ends the named range there.
 * A value that names no instant, or a `from` not before `to`, is replaced by the named range (by default the last
 * 24 hours) and said so in `notices`. A relative range ends at the next whole minute, so that reloading within a
 * minute asks the same question.
 */
export function filtersOf(query: URLSearchParams, now: Date = new Date()): Filters {
  const notices: string[] = [];
  const base = { server: query.get('server'), tool: query.get('tool'), agent: query.get('agent') };
  const rawRange = query.get('range');
  /** Said only where the named range is used. */
  const rangeNotice = (): void => {
    if (rawRange !== null && !isRange(rawRange)) {
      notices.push(`"range" must be one of ${RANGE_NAMES}, not "${rawRange}".`);
    }
  };
  const range = isRange(rawRange) ? rawRange : DEFAULT_RANGE;
  const end = new Date(Math.ceil(now.getTime() / 60_000) * 60_000);
  const date = (name: 'from' | 'to'): Date | null => {
    const value = query.get(name);
    if (value === null) return null;
    const parsed = parseQueryInstant(value);
    if (parsed === null)
      notices.push(`"${name}" is not an ISO-8601 date or date-time that exists: "${value}".`);
    return parsed;
  };
  const rawFrom = query.get('from');
  const rawTo = query.get('to');
  const from = date('from');
  const to = date('to');
  const invalid = (rawFrom !== null && from === null) || (rawTo !== null && to === null);
  if (!invalid && from !== null) {
    const until = to ?? end;
    if (from < until) return { range: 'custom', from, to: until, ...base, notices };
    notices.push(
      to === null
        ? `"from" (${rawFrom}) is not in the past.`
        : `"from" (${rawFrom}) is not before "to" (${rawTo}).`,
    );
  } else if (!invalid && to !== null) {
    rangeNotice();
    const length = RANGES[range].label.toLowerCase().replace(/^last /, '');
    notices.push(`"to" was given without "from": showing the ${length} before it.`);
    return { range: 'custom', from: new Date(to.getTime() - RANGES[range].ms), to, ...base, notices };
  }
  rangeNotice();
  if (notices.length > 0) notices.push(`Showing ${RANGES[range].label.toLowerCase()} instead.`);
  return { range, from: new Date(end.getTime() - RANGES[range].ms), to: end, ...base, notices };
}

/**
 * The page a run timeline was opened from, as its link names it (`back`, which `traceHref` sets): one of the pages
 * that link to timelines, with the view of the nav it belongs to. Null for a timeline opened without one (a trace id
 * pasted into the address bar, a link from elsewhere), or with a `back` that is no such page: it came from nowhere
 * the app knows, so no view of the nav is the current one.
 */
export function traceOrigin(
  back: string | null,
): { readonly path: string; readonly label: string; readonly nav: Route['page'] } | null {
  if (back === '/misclassified') return { path: back, label: 'Misclassified results', nav: 'misclassified' };
  if (back === '/retry-waste') return { path: back, label: 'Retry waste', nav: 'retry-waste' };
  if (back !== null && /^\/findings\/[0-9a-f]{20}$/.test(back))
    return { path: back, label: 'Finding', nav: 'findings' };
  return null;
}

/** The REST parameters of the filters. */
export const reportParams = (filters: Filters) => ({
  from: filters.from.toISOString(),
  to: filters.to.toISOString(),
  server: filters.server,
  tool: filters.tool,
  agent: filters.agent,
});

/**
 * The window as the URL names it (`range`, or `from` and `to`): what the filter bar's own state (a custom range being
 * typed) belongs to, and so what it is keyed on. Keyed on every filter, it was drawn anew, and asked for the same server,
 * tool and agent lists again, whenever a tool or an agent was chosen.
 */
export const windowKey = (query: URLSearchParams): string =>
  JSON.stringify(['range', 'from', 'to'].map((name) => query.get(name)));

/** The query parameters that carry the window and filters from page to page. */
export function filterQuery(query: URLSearchParams, also: readonly string[] = []): string {
  const kept = new URLSearchParams();
  for (const name of ['range', 'from', 'to', 'server', 'tool', 'agent', ...also]) {
    const value = query.get(name);
    if (value !== null) kept.set(name, value);
  }
  const search = kept.toString();
  return search === '' ? '' : `?${search}`;
}
