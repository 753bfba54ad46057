/**
 * Lenient readers for OTLP attribute values: instrumentations disagree on types (an int64 may arrive as a
 * decimal string, a bool as "true"), so each reader accepts the spellings that cannot be misread.
 */
import type { Attributes, AttributeValue } from './span';

/** A non-empty string; a finite number is read as its decimal string. */
export function readString(attributes: Attributes, key: string): string | null {
  const value = attributes[key];
  if (typeof value === 'string') return value === '' ? null : value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/** A safe integer, as a number or a decimal-integer string. */
export function readInt(attributes: Attributes, key: string): number | null {
  return toInt(attributes[key]);
}

export function toInt(value: AttributeValue | undefined | unknown): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : null;
  if (typeof value === 'string' && /^\s*-?\d{1,15}\s*$/.test(value)) return Number.parseInt(value, 10);
  return null;
}

/** A boolean, or the strings "true"/"false". */
export function readBool(attributes: Attributes, key: string): boolean | null {
  const value = attributes[key];
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return null;
}

/** A string array attribute; also a JSON-encoded string array, or a single string as a one-item list. */
export function readStringArray(attributes: Attributes, key: string): string[] | null {
  const value = attributes[key];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  if (typeof value !== 'string' || value === '') return null;
  if (value.trimStart().startsWith('[')) {
    const parsed = parseJson(value);
    if (Array.isArray(parsed)) return parsed.filter((v): v is string => typeof v === 'string');
  }
  return [value];
}

/** JSON.parse that returns undefined instead of throwing. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The first value that is not null, or null. */
export function firstNonNull<T>(values: readonly (T | null)[]): T | null {
  return values.find((v): v is T => v !== null) ?? null;
}
