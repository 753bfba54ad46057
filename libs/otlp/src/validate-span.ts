import type { AttributeValue } from '@errata/domain';
import { attributeValueBytes, attributeValueFits } from './attribute-size';
import { SpanRejection } from './errors';

const MAX_KEY_IN_REASON = 128;

/** Field names as the sender spelled them, so a reason points at what they wrote. */
export interface TimeFieldNames {
  readonly start: string;
  readonly end: string;
}

/**
 * Errata keeps span times as nanoseconds since 1970 in signed 64-bit integers: an OTLP uint64 at or past 2⁶³ (after
 * the year 2262) cannot be stored, and accepted it stopped every projection.
 */
const MAX_TIME_UNIX_NANO = 2n ** 63n - 1n;

export function checkTimes(start: bigint, end: bigint, names: TimeFieldNames): void {
  if (start === 0n) throw new SpanRejection(`${names.start} is missing or zero`);
  if (end < start) throw new SpanRejection(`${names.end} (${end}) is before ${names.start} (${start})`);
  if (end > MAX_TIME_UNIX_NANO) {
    throw new SpanRejection(`${names.end} (${end}) is after the year 2262, past what Errata can store`);
  }
}

/**
 * Why one attribute value is too large, or null when it fits. Checked as each attribute is read,
 * not in a second pass: attribute objects of this size live in V8's dictionary mode, where
 * enumerating them again is comparatively slow. `owner` reads as "attribute" or "resource attribute".
 */
export function attributeSizeProblem(
  owner: string,
  key: string,
  value: AttributeValue,
  maxBytes: number,
): string | null {
  if (attributeValueFits(value, maxBytes)) return null;
  const kind =
    typeof value === 'string' ? 'is' : `(${Array.isArray(value) ? 'array' : 'key-value list'}) totals`;
  return `${owner} ${quoteKey(key)} ${kind} ${attributeValueBytes(value)} bytes, over the ${maxBytes}-byte limit`;
}

export function quoteKey(key: string): string {
  return JSON.stringify(key.length > MAX_KEY_IN_REASON ? `${key.slice(0, MAX_KEY_IN_REASON)}…` : key);
}
