/**
 * Where the user is: the page from the path, and the window and filters from the query string, so that any
 * view can be shared as a link. Navigation uses the History API; the server answers every page path with the app.
 */
import { parseIsoInstant } from '@errata/domain/iso-instant';
import { useEffect, useState } from 'preact/hooks';

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

export function navigate(href: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  window.dispatchEvent(new Event(NAVIGATED));
}

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
}

const isRange = (value: string | null): value is RangeName => value !== null && Object.hasOwn(RANGES, value);

const parseDate = (value: string | null): Date | null => (value === null ? null : parseIsoInstant(value));

/** A relative range ends at the next whole minute, so that reloading within a minute asks the same question. */
export function filtersOf(query: URLSearchParams, now: Date = new Date()): Filters {
  const from = parseDate(query.get('from'));
  const to = parseDate(query.get('to'));
  const base = { server: query.get('server'), tool: query.get('tool'), agent: query.get('agent') };
  if (from !== null && to !== null && from < to) return { range: 'custom', from, to, ...base };
  const range = isRange(query.get('range')) ? (query.get('range') as RangeName) : DEFAULT_RANGE;
  const end = new Date(Math.ceil(now.getTime() / 60_000) * 60_000);
  return { range, from: new Date(end.getTime() - RANGES[range].ms), to: end, ...base };
}

/** The REST parameters of the filters. */
export const reportParams = (filters: Filters) => ({
  from: filters.from.toISOString(),
  to: filters.to.toISOString(),
  server: filters.server,
  tool: filters.tool,
  agent: filters.agent,
});

/** The query parameters that carry the window and filters from page to page. */
export function filterQuery(query: URLSearchParams): string {
  const kept = new URLSearchParams();
  for (const name of ['range', 'from', 'to', 'server', 'tool', 'agent']) {
    const value = query.get(name);
    if (value !== null) kept.set(name, value);
  }
  const search = kept.toString();
  return search === '' ? '' : `?${search}`;
}
