import type { ServerScorecard } from '@errata/domain';
import { UNKNOWN_SERVER } from '@errata/domain/server-label';
import { useState } from 'preact/hooks';
import { formatDateTime } from '../format';
import { navigate, RANGES, withQuery, type Filters, type RangeName } from '../route';
import { useApi } from '../use-api';
import { UrlNotice } from './states';

/** `datetime-local` inputs speak local time; the URL speaks ISO-8601 UTC. */
const toLocalInput = (date: Date): string =>
  new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
const fromLocalInput = (value: string): string | null => {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
};

/** The time range and server and tool filters. Every change goes into the URL, so the view can be shared. */
export function FilterBar({ filters, query }: { filters: Filters; query: URLSearchParams }) {
  const [custom, setCustom] = useState(filters.range === 'custom');
  const [from, setFrom] = useState(toLocalInput(filters.from));
  const [to, setTo] = useState(toLocalInput(filters.to));
  const servers = useApi<ServerScorecard>('/api/v1/servers', {
    from: filters.from.toISOString(),
    to: filters.to.toISOString(),
  });
  const scorecard = servers.state === 'ready' ? servers.data.servers : [];
  const serverNames = [
    ...new Set([...scorecard.map((s) => s.server ?? UNKNOWN_SERVER), filters.server ?? '']),
  ]
    .filter((name) => name !== '')
    .sort();
  const toolNames = [
    ...new Set([
      ...scorecard
        .filter((s) => filters.server === null || (s.server ?? UNKNOWN_SERVER) === filters.server)
        .flatMap((s) => s.tools.map((t) => t.tool)),
      filters.tool ?? '',
    ]),
  ]
    .filter((name) => name !== '')
    .sort();

  // Other filters make other pages: a pager's offset does not carry over to them.
  const go = (changes: Record<string, string | null>) =>
    navigate(location.pathname + withQuery(query, { offset: null, ...changes }));
  const onRange = (value: string) => {
    if (value === 'custom') {
      setCustom(true);
      return;
    }
    setCustom(false);
    go({ range: value, from: null, to: null });
  };
  const applyCustom = (event: Event) => {
    event.preventDefault();
    const fromIso = fromLocalInput(from);
    const toIso = fromLocalInput(to);
    if (fromIso && toIso && fromIso < toIso) go({ range: null, from: fromIso, to: toIso });
  };
  const customInvalid = (() => {
    const a = fromLocalInput(from);
    const b = fromLocalInput(to);
    return a === null || b === null || a >= b;
  })();

  return (
    <>
      <form class="filters" aria-label="Time range and filters" onSubmit={applyCustom}>
        <div class="field">
          <label for="filter-range">Time range</label>
          <select
            id="filter-range"
            name="range"
            value={custom ? 'custom' : filters.range}
            onChange={(e) => onRange(e.currentTarget.value)}
          >
            {(Object.keys(RANGES) as RangeName[]).map((name) => (
              <option value={name} key={name}>
                {RANGES[name].label}
              </option>
            ))}
            <option value="custom">Custom…</option>
          </select>
        </div>
        {custom && (
          <>
            <div class="field">
              <label for="filter-from">From</label>
              <input
                id="filter-from"
                type="datetime-local"
                name="from"
                value={from}
                onInput={(e) => setFrom(e.currentTarget.value)}
              />
            </div>
            <div class="field">
              <label for="filter-to">To</label>
              <input
                id="filter-to"
                type="datetime-local"
                name="to"
                value={to}
                onInput={(e) => setTo(e.currentTarget.value)}
              />
            </div>
            <button type="submit" disabled={customInvalid}>
              Apply
            </button>
          </>
        )}
        <div class="field">
          <label for="filter-server">Server</label>
          <select
            id="filter-server"
            name="server"
            value={filters.server ?? ''}
            onChange={(e) => go({ server: e.currentTarget.value || null, tool: null })}
          >
            <option value="">All servers</option>
            {serverNames.map((name) => (
              <option value={name} key={name}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="filter-tool">Tool</label>
          <select
            id="filter-tool"
            name="tool"
            value={filters.tool ?? ''}
            onChange={(e) => go({ tool: e.currentTarget.value || null })}
          >
            <option value="">All tools</option>
            {toolNames.map((name) => (
              <option value={name} key={name}>
                {name}
              </option>
            ))}
          </select>
        </div>
        {filters.agent !== null && (
          <p class="filter-chip">
            Agent <strong>{filters.agent}</strong>{' '}
            <button type="button" aria-label="Clear the agent filter" onClick={() => go({ agent: null })}>
              ×
            </button>
          </p>
        )}
        <p class="window" data-from={filters.from.toISOString()} data-to={filters.to.toISOString()}>
          {formatDateTime(filters.from.toISOString())} – {formatDateTime(filters.to.toISOString())}
        </p>
      </form>
      <UrlNotice notices={filters.notices} />
    </>
  );
}
