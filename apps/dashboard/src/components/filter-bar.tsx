import { UNKNOWN_SERVER } from '@errata/domain/server-label';
import { useState } from 'preact/hooks';
import { keepFocus } from '../focus';
import { formatDateTime } from '../format';
import { navigate, RANGES, withQuery, type Filters, type RangeName } from '../route';
import { useApi } from '../use-api';
import { NameCombobox, type CallNames, type NameList } from './name-combobox';
import { UrlNotice } from './states';

/** `datetime-local` inputs speak local time; the URL speaks ISO-8601 UTC. */
const toLocalInput = (date: Date): string =>
  new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
const fromLocalInput = (value: string): string | null => {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
};
/**
 * The zone the `datetime-local` inputs speak, the browser's: said next to them, as every other time on the page is
 * UTC (labelled so). Unsaid, a user east or west of UTC read the window's "08:03 UTC" beside a From of 13:33.
 */
const inputZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';

/** The unnamed server (null in `GET /names`) goes by its label, which the `server` filter selects it by. */
const serverList = (names: CallNames): NameList => ({
  names: names.servers.map((server) => server ?? UNKNOWN_SERVER),
  count: names.serverCount,
});
const toolList = (names: CallNames): NameList => ({ names: names.tools, count: names.toolCount });
const agentList = (names: CallNames): NameList => ({ names: names.agents, count: names.agentCount });

/** The time range and server, tool and agent filters. Every change goes into the URL, so the view can be shared. */
export function FilterBar({ filters, query }: { filters: Filters; query: URLSearchParams }) {
  const [custom, setCustom] = useState(filters.range === 'custom');
  // Only an end the user typed is read back from its input: a local time can name two instants (the hour the clocks
  // go back) or none (the hour they go forward), so the other end keeps the URL's instant exactly.
  const [from, setFrom] = useState<string | null>(null);
  const [to, setTo] = useState<string | null>(null);
  // The names seen in the window, listed and counted by the API (`GET /names`): the tools of the chosen server, or of
  // every server without one; the servers and agents of the window.
  const windowParams = { from: filters.from.toISOString(), to: filters.to.toISOString() };
  const loaded = useApi<CallNames>('/api/v1/names', { ...windowParams, server: filters.server });
  const names = loaded.state === 'ready' ? loaded.data : null;

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
  const fromIso = from === null ? filters.from.toISOString() : fromLocalInput(from);
  const toIso = to === null ? filters.to.toISOString() : fromLocalInput(to);
  const applyCustom = (event: Event) => {
    event.preventDefault();
    if (fromIso && toIso && fromIso < toIso) go({ range: null, from: fromIso, to: toIso });
  };
  /** Why Apply is disabled, if it is. */
  const customProblem = (() => {
    for (const [label, typed] of [
      ['From', from],
      ['To', to],
    ] as const) {
      if (typed === null) continue;
      const iso = fromLocalInput(typed);
      if (iso === null) return `${label} is not a complete date and time.`;
      const shown = toLocalInput(new Date(iso));
      if (shown !== typed) {
        return `${label}: ${typed.replace('T', ' ')} does not exist in this time zone (the clocks go forward); it would be read as ${shown.replace('T', ' ')}.`;
      }
    }
    return fromIso !== null && toIso !== null && fromIso >= toIso ? 'From must be before To.' : null;
  })();
  const customInvalid = fromIso === null || toIso === null || fromIso >= toIso || customProblem !== null;

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
                value={from ?? toLocalInput(filters.from)}
                onInput={(e) => setFrom(e.currentTarget.value)}
                aria-describedby="filter-zone"
              />
            </div>
            <div class="field">
              <label for="filter-to">To</label>
              <input
                id="filter-to"
                type="datetime-local"
                name="to"
                value={to ?? toLocalInput(filters.to)}
                onInput={(e) => setTo(e.currentTarget.value)}
                aria-describedby="filter-zone"
              />
            </div>
            <button
              type="submit"
              disabled={customInvalid}
              aria-describedby={customProblem ? 'filter-custom-problem' : undefined}
            >
              Apply
            </button>
            <p id="filter-zone" class="field-hint">
              From and To are in {inputZone()}, your browser's time zone; the times shown are UTC.
            </p>
            {customProblem && (
              <p id="filter-custom-problem" class="field-problem" role="status">
                {customProblem}
              </p>
            )}
          </>
        )}
        <NameCombobox
          name="server"
          label="Server"
          everything="All servers"
          what={['server', 'servers']}
          listed={names && serverList(names)}
          params={windowParams}
          pick={serverList}
          value={filters.server}
          onChange={(server) => go({ server, tool: null })}
        />
        <NameCombobox
          name="tool"
          label="Tool"
          everything="All tools"
          what={['tool', 'tools']}
          listed={names && toolList(names)}
          params={{ ...windowParams, server: filters.server }}
          pick={toolList}
          value={filters.tool}
          onChange={(tool) => go({ tool })}
        />
        <NameCombobox
          name="agent"
          label="Agent"
          everything="All agents"
          what={['agent', 'agents']}
          listed={names && agentList(names)}
          params={windowParams}
          pick={agentList}
          value={filters.agent}
          onChange={(agent) => go({ agent })}
        />
        {loaded.state === 'error' && <ListsNotLoaded retry={loaded.retry} />}
        <p class="window" data-from={filters.from.toISOString()} data-to={filters.to.toISOString()}>
          {formatDateTime(filters.from.toISOString())} – {formatDateTime(filters.to.toISOString())}
        </p>
      </form>
      <UrlNotice notices={filters.notices} />
    </>
  );
}

/**
 * The server, tool and agent lists did not load (Errata down, say): said, with a way to ask again, rather than
 * offering "All servers" alone as if there were no others.
 */
function ListsNotLoaded({ retry }: { retry: () => void }) {
  return (
    <p class="field-problem" role="status" data-lists-failed>
      The server, tool and agent lists could not be loaded.{' '}
      <button
        type="button"
        onClick={() => {
          keepFocus('filter-server'); // on the server list once they load, back on this button if they fail again
          retry();
        }}
      >
        Load them again
      </button>
    </p>
  );
}
