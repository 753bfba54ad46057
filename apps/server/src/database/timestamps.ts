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

/** The same conversion in JavaScript: whole microseconds since the epoch → ISO-8601 text with microseconds. */
export function isoFromMicros(micros: number): string {
  const millis = Math.floor(micros / 1_000);
  const iso = new Date(millis).toISOString(); // 2026-11-30T01:02:03.456Z
  return `${iso.slice(0, -1)}${String(micros - millis * 1_000).padStart(3, '0')}Z`;
}

/** Nanoseconds → ISO-8601 text, for tools that write rows themselves (the benchmark's COPY ceiling). */
export function timestampFromUnixNano(unixNano: bigint | string): string {
  return isoFromMicros(unixMicros(unixNano));
}
