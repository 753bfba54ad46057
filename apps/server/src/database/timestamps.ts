/**
 * Span times arrive as exact nanoseconds; Postgres keeps microseconds. Every place that turns a span time
 * into a `timestamptz` goes through here, so the event's key and its read-model rows always agree.
 */
export function timestampFromUnixNano(unixNano: bigint | string): string {
  const nanos = BigInt(unixNano);
  const millis = nanos / 1_000_000n;
  const microsOfMilli = (nanos / 1_000n) % 1_000n;
  const iso = new Date(Number(millis)).toISOString(); // 2026-11-30T01:02:03.456Z
  return `${iso.slice(0, -1)}${microsOfMilli.toString().padStart(3, '0')}Z`;
}
