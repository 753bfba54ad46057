import { sql, type RawBuilder } from 'kysely';

/**
 * Span times arrive as exact nanoseconds; Postgres keeps microseconds. Every span time is sent to the
 * database as whole microseconds since the epoch and turned into a `timestamptz` by `timestampFromMicros`,
 * so an event's key and its read-model rows always agree to the microsecond.
 */
export function unixMicros(unixNano: bigint | string): number {
  return Number(BigInt(unixNano) / 1_000n); // < 2^53 until the year 2255: exact as a number
}

/** SQL: whole microseconds since the epoch → timestamptz, exactly (float8 holds these integers exactly). */
export function timestampFromMicros(micros: RawBuilder<unknown>): RawBuilder<Date> {
  return sql<Date>`(timestamptz 'epoch' + ${micros} * interval '1 microsecond')`;
}

const MICROS_PER_MINUTE = 60_000_000;
/** The minute of the last `isoFromMicros` call and its text (`2026-11-30T01:02:`): a request's spans share a few. */
let cachedMinute = Number.NaN;
let cachedMinuteText = '';

/**
 * The same conversion in JavaScript: whole microseconds since the epoch → ISO-8601 text with microseconds. Ingest
 * writes two per event (bench:ingest), so only a new minute goes through `Date`.
 */
export function isoFromMicros(micros: number): string {
  const minute = Math.floor(micros / MICROS_PER_MINUTE);
  if (minute !== cachedMinute) {
    const iso = new Date(minute * 60_000).toISOString(); // 2026-11-30T01:02:00.000Z
    // Years before 0000 or after 9999 are written with a sign and six digits: no fixed-width prefix to reuse.
    if (iso.length !== 24) return isoFromMicrosByDate(micros);
    cachedMinute = minute;
    cachedMinuteText = iso.slice(0, 17);
  }
  const inMinute = micros - minute * MICROS_PER_MINUTE;
  const seconds = Math.floor(inMinute / 1_000_000);
  const fraction = inMinute - seconds * 1_000_000;
  return `${cachedMinuteText}${seconds < 10 ? '0' : ''}${seconds}.${String(fraction).padStart(6, '0')}Z`;
}

/** `isoFromMicros` through `Date` alone (the fallback, and the reference its test compares against). */
export function isoFromMicrosByDate(micros: number): string {
  const millis = Math.floor(micros / 1_000);
  const iso = new Date(millis).toISOString(); // 2026-11-30T01:02:03.456Z
  return `${iso.slice(0, -1)}${String(micros - millis * 1_000).padStart(3, '0')}Z`;
}

/**
 * A `Date` as timestamptz text PostgreSQL reads as that instant: ISO-8601 in UTC, but a year after 9999 without the
 * sign and zeros of ISO's expanded years (`+010000-…`), and one before 1 as a year BC (`Date`'s year 0 is 1 BC).
 * PostgreSQL refuses both spellings `toISOString` gives them, and report windows reach them: a `to` in the last hour
 * of 9999 is widened to its whole hour, 10000-01-01.
 */
export function timestamptzText(date: Date): string {
  const iso = date.toISOString();
  const year = date.getUTCFullYear();
  if (year >= 1 && year <= 9999) return iso;
  const rest = iso.slice(iso.indexOf('-', 1)); // -MM-DDTHH:MM:SS.mmmZ
  return year > 9999 ? `${year}${rest}` : `${String(1 - year).padStart(4, '0')}${rest} BC`;
}

/** Nanoseconds → ISO-8601 text, for tools that write rows themselves (the benchmark's COPY ceiling). */
export function timestampFromUnixNano(unixNano: bigint | string): string {
  return isoFromMicros(unixMicros(unixNano));
}
