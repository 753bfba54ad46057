import type { ComponentChildren } from 'preact';
import type { RetryWasteReport } from '@errata/domain';
import { formatCount, labelOf } from '../format';
import { useApi } from '../use-api';
import { EmptyState } from './states';
import type { Filters } from '../route';

/**
 * One headline figure: the value formatted for reading (`format`, a count by default; `display` for a text such as a
 * date), the REST API's raw value on `data-value`. Its label and value are a list of their own: the detail and the
 * chart under them are no part of a `<dl>`, so the figures sit in a `<div class="stats">`.
 */
export function Stat(props: {
  id: string;
  label: string;
  value: number | null;
  format?: (n: number) => string;
  display?: string;
  detail?: ComponentChildren;
  /** A date or a phrase rather than a number: set smaller. */
  text?: boolean;
  children?: ComponentChildren;
}) {
  return (
    <div class="stat" data-stat={props.id}>
      <dl>
        <dt>{props.label}</dt>
        <dd
          class={props.text ? 'text' : undefined}
          data-value={props.value === null ? '' : String(props.value)}
        >
          {props.display ?? (props.value === null ? '—' : (props.format ?? formatCount)(props.value))}
        </dd>
      </dl>
      {props.detail && <p class="stat-detail">{props.detail}</p>}
      {props.children}
    </div>
  );
}

export function PageHeader({ title, children }: { title: ComponentChildren; children?: ComponentChildren }) {
  return (
    <div class="page-header">
      <h1 id="page-title">{title}</h1>
      {children && <p class="lede">{children}</p>}
    </div>
  );
}

/**
 * The empty state of a view: "no data yet" (with how to send some) when the project has never received a tool
 * call, "nothing in this window" otherwise.
 */
export function NoData({ what, filters }: { what: string; filters: Filters }) {
  const ever = useApi<RetryWasteReport>('/api/v1/reports/retry-waste');
  if (ever.state === 'loading') return null;
  const neverReceived = ever.state === 'ready' && ever.data.totals.calls === 0;
  const filtered = filters.server !== null || filters.tool !== null || filters.agent !== null;
  return <EmptyState what={what} filtered={!neverReceived || filtered} />;
}

/** A number in a table: formatted for reading, the API's raw value on `data-value`. */
export function NumberCell({
  value,
  format = formatCount,
}: {
  value: number | null;
  format?: (n: number) => string;
}) {
  return (
    <td class="num" data-value={value === null ? '' : String(value)}>
      {value === null ? '—' : format(value)}
    </td>
  );
}

/** Labelled counts in a table cell (retry reasons, broken rules): zeros left out, the API's key and value on each. */
export function CountList({ counts }: { counts: Readonly<Record<string, number | undefined>> }) {
  return (
    <ul class="reasons">
      {Object.entries(counts).map(([key, n]) =>
        n === undefined || n <= 0 ? null : (
          <li key={key} data-key={key} data-value={n}>
            {labelOf(key)} <strong>{formatCount(n)}</strong>
          </li>
        ),
      )}
    </ul>
  );
}
