import { counted, formatCount } from '../format';
import { navigate, withQuery } from '../route';
import { Link } from './link';

/** Rows a paged table shows: the API's default page (its `limit`). */
export const PAGE_SIZE = 50;

/** The `offset` of a paged table's URL: a whole number, 0 when absent or not one. */
export const offsetOf = (query: URLSearchParams): number =>
  Math.max(0, Number.parseInt(query.get('offset') ?? '0', 10) || 0);

/**
 * "1–50 of 1,200" with Previous and Next, which move the URL's `offset` by a page (focus stays on the button used:
 * focus.ts). At the first or last page the button is aria-disabled rather than disabled: focus stays on Next once it
 * reaches the last page, rather than fall back to the top of the content.
 */
export function Pager(props: {
  readonly label: string;
  readonly query: URLSearchParams;
  readonly offset: number;
  readonly shown: number;
  readonly total: number;
}) {
  const { label, query, offset, shown, total } = props;
  const go = (to: number) =>
    navigate(location.pathname + withQuery(query, { offset: to > 0 ? String(to) : null }));
  return (
    <nav class="pager" aria-label={label}>
      <span data-page-range>
        {formatCount(offset + 1)}–{formatCount(offset + shown)} of {formatCount(total)}
      </span>
      <PagerButton label="Previous" to={offset === 0 ? null : Math.max(0, offset - PAGE_SIZE)} go={go} />
      <PagerButton label="Next" to={offset + PAGE_SIZE >= total ? null : offset + PAGE_SIZE} go={go} />
    </nav>
  );
}

/** A pager's button; `to` null: there is no page that way. */
function PagerButton({ label, to, go }: { label: string; to: number | null; go: (to: number) => void }) {
  return (
    <button type="button" aria-disabled={to === null} onClick={() => to !== null && go(to)}>
      {label}
    </button>
  );
}

/**
 * What a paged table shows instead of an empty page when its `offset` starts past the last row (a bookmark from
 * before data was pruned, an edited URL): how many there are, and a link back to the first page. `what` is plural:
 * "findings", "servers".
 */
export function PastEnd(props: {
  /** What the page lists, singular and plural. */
  readonly what: readonly [singular: string, plural: string];
  readonly query: URLSearchParams;
  readonly offset: number;
  readonly total: number;
}) {
  const { what, query, offset, total } = props;
  return (
    <p class="url-notice" role="status" data-past-end>
      There {total === 1 ? 'is' : 'are'} {counted(total, ...what)}: this page starts past the last one{' '}
      {`(offset ${formatCount(offset)}).`}{' '}
      <Link href={location.pathname + withQuery(query, { offset: null })}>Go to the first page</Link>
    </p>
  );
}
