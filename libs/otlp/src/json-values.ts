import { SpanRejection } from './errors';
import { decimalInt64 } from './int64';

const UINT64_MAX = (1n << 64n) - 1n;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const UNSIGNED_DECIMAL = /^\d+$/;
const SIGNED_DECIMAL = /^-?\d+$/;

export type JsonObject = { readonly [key: string]: unknown };

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * OTLP/JSON sends 64-bit integers as decimal strings but receivers must accept numbers too. A
 * number above 2^53 was already rounded by JSON.parse; it is taken as parsed.
 */
export function uint64FromJson(value: unknown, field: string): bigint {
  if (value === undefined || value === null) return 0n;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) {
    const exact = BigInt(value);
    if (exact <= UINT64_MAX) return exact;
  }
  if (typeof value === 'string' && UNSIGNED_DECIMAL.test(value)) {
    const exact = BigInt(value);
    if (exact <= UINT64_MAX) return exact;
  }
  throw new SpanRejection(
    `${field} must be an unsigned 64-bit integer, as a decimal string or number (got ${describeJson(value)})`,
  );
}

/**
 * An int64 attribute value: a number when it is a safe integer, else exact decimal text. `field`
 * is only called to word a rejection, keeping string building off the hot path.
 */
export function int64AttributeFromJson(value: unknown, field: () => string): number | string {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  let exact: bigint | undefined;
  if (typeof value === 'number' && Number.isInteger(value)) exact = BigInt(value);
  else if (typeof value === 'string' && SIGNED_DECIMAL.test(value)) exact = BigInt(value);
  if (exact === undefined || exact < INT64_MIN || exact > INT64_MAX) {
    throw new SpanRejection(
      `${field()} must be a 64-bit integer, as a decimal string or number (got ${describeJson(value)})`,
    );
  }
  return decimalInt64(exact);
}

/** proto3 JSON spells non-finite doubles as strings and also allows numeric strings. */
export function doubleFromJson(value: unknown, field: () => string): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    if (value === 'NaN') return NaN;
    if (value === 'Infinity') return Infinity;
    if (value === '-Infinity') return -Infinity;
    const parsed = value.trim() === '' ? NaN : Number(value);
    if (Number.isFinite(parsed)) return parsed;
  }
  throw new SpanRejection(`${field()} must be a number (got ${describeJson(value)})`);
}

/**
 * OTLP/JSON requires integer enums. Enum names, which plain proto3 JSON would use, are tolerated
 * because their meaning is unambiguous.
 */
export function enumFromJson(value: unknown, names: Readonly<Record<string, number>>, field: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) <= 0x7fffffff) return value;
  if (typeof value === 'string' && Object.prototype.hasOwnProperty.call(names, value)) {
    return names[value] ?? 0;
  }
  throw new SpanRejection(`${field} must be an integer enum value (got ${describeJson(value)})`);
}

export function stringFromJson(value: unknown, field: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  throw new SpanRejection(`${field} must be a string (got ${describeJson(value)})`);
}

/** A short, quoted rendering of what was sent, for rejection reasons. */
export function describeJson(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
