/** How figures read on the page: grouped integers, percentages, durations. The REST API's raw numbers stay on `data-value`. */
const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

export const formatCount = (n: number): string => integer.format(n);

/** A count and the noun that goes with it: "1 item", "2 items" (give the plural when it is not the singular + "s"). */
export const counted = (n: number, singular: string, plural = `${singular}s`): string =>
  `${formatCount(n)} ${n === 1 ? singular : plural}`;

export const formatPercent = (share: number | null): string =>
  share === null ? '—' : `${decimal.format(share * 100)}%`;

/**
 * A duration in the unit that reads best. Under 10 ms with a tenth (a retry of a local tool wastes 0.4 ms, not
 * "0 ms"); each unit gives way to the next where its rounding would reach that one (999.7 ms is "1 s").
 */
export function formatDuration(ms: number): string {
  if (ms > 0 && ms < 0.05) return '< 0.1 ms';
  if (ms < 9.95) return `${decimal.format(ms)} ms`;
  if (ms < 999.5) return `${integer.format(ms)} ms`;
  if (ms < 59_950) return `${decimal.format(ms / 1_000)} s`;
  if (ms < 3_597_000) return `${decimal.format(ms / 60_000)} min`;
  return `${decimal.format(ms / 3_600_000)} h`;
}

const dateTime = new Intl.DateTimeFormat('en-GB', {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  timeZone: 'UTC',
  timeZoneName: 'short',
});

export const formatDateTime = (iso: string): string => dateTime.format(new Date(iso));

/** A time inside a run, to the millisecond. */
export const formatClock = (iso: string): string => iso.slice(11, 23);

/** A key as words: `ignored_retry_after` → "ignored retry after", `emptyAsError` → "empty as error". */
export const labelOf = (key: string): string =>
  key.replace(/_/g, ' ').replace(/([a-z])([A-Z])/g, (_, a: string, b: string) => `${a} ${b.toLowerCase()}`);
