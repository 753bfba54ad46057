const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/;
/** An offset of whole hours, `+05`, which ISO 8601 allows and `Date` does not read. */
const HOURS_ONLY_OFFSET = /[+-]\d{2}$/;

/**
 * The instant an ISO-8601 date or date-time names, or null when it names none. A date-time without an offset is
 * UTC, as a date alone is (`Date` would read it in the local time zone of whoever parses it: the server's or the
 * browser's). The fields must name a real instant: `Date` rolls 2026-11-31 over to 1 December and 2026-02-30 to
 * 2 March, which would answer for another window than the one asked about. 24:00 is the end of a day. An offset
 * may be given in hours alone (`+05`), as ISO 8601 allows.
 */
export function parseIsoInstant(value: string): Date | null {
  const match = ISO_8601.exec(value);
  if (match === null) return null;
  const field = (index: number): number => Number(match[index] ?? 0);
  const [year, month, day, hour, minute, second] = [
    field(1),
    field(2),
    field(3),
    field(4),
    field(5),
    field(6),
  ];
  const lastOfMonth = new Date(0);
  lastOfMonth.setUTCFullYear(year, month, 0); // Date.UTC would read the years 0–99 as 1900–1999
  const daysInMonth = lastOfMonth.getUTCDate();
  const endOfDay = hour === 24 && minute === 0 && second === 0;
  const isCalendarDate =
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth &&
    (hour <= 23 || endOfDay) &&
    minute <= 59 &&
    second <= 59;
  if (!isCalendarDate) return null;
  const parsed = new Date(readableByDate(value, match[4] !== undefined, match[8]));
  return Number.isNaN(parsed.getTime()) ? null : parsed;
}

/**
 * The same instant as `Date` reads it: it would read a date-time without an offset in the local time zone, and an
 * offset of hours alone not at all (`+05` is written `+05:00`).
 */
function readableByDate(value: string, hasTime: boolean, offset: string | undefined): string {
  if (!hasTime) return value;
  if (offset === undefined) return `${value}Z`;
  return HOURS_ONLY_OFFSET.test(offset) ? `${value}:00` : value;
}

/** A date-time whose offset lost its `+` to form decoding: `2026-11-30T10:00:00 05:30`, `… 05`. */
const OFFSET_SIGN_DECODED_AS_SPACE = /^(\d{4}-\d{2}-\d{2}T[\d:.]+) (\d{2}(?::?\d{2})?)$/;

/**
 * `parseIsoInstant` for a value read from a URL's query string. There `+` means a space, so an offset such as
 * `+05:30` typed into a URL (curl, a browser's address bar) arrives as ` 05:30`, and refusing it answered a 400
 * quoting a value the user never wrote. A space can stand nowhere else in an instant: read it as the `+` it was.
 */
export function parseQueryInstant(value: string): Date | null {
  return parseIsoInstant(value.replace(OFFSET_SIGN_DECODED_AS_SPACE, '$1+$2'));
}
