/**
 * Reading what a tool result declares about itself: the JSON of `structuredContent` or of a text block
 * (DOMAIN.md §1 "declared"), looked up at the top level, in a nested `error: {…}`, in `_meta` (namespaced
 * keys such as `com.example/errorCategory` count by their last segment) and in a wrapped `structuredContent`.
 * Texts already cut by truncation are not valid JSON; for those, `"key": value` pairs are scanned instead.
 */
import { isRecord, parseJson, toInt } from './attributes';
import {
  CATEGORY_KEYS,
  CODE_KEYS,
  CUSTOMER_EXPLANATION_KEYS,
  HTTP_STATUS_KEYS,
  RETRYABLE_KEYS,
  RETRY_AFTER_KEYS,
} from './rules';

/** One stored result text (structured JSON or text block), parsed when it is JSON. */
export interface Payload {
  readonly raw: string;
  /** The parsed JSON, or undefined when the text is not (complete) JSON. */
  readonly json: unknown;
}

export function toPayload(raw: string | null): Payload | null {
  if (raw === null || raw === '') return null;
  const first = raw.trimStart()[0];
  return { raw, json: first === '{' || first === '[' ? parseJson(raw) : undefined };
}

/** The payloads of a result: its structured JSON and its text, those that are present. */
export function resultPayloads(structured: string | null, text: string | null): Payload[] {
  return [toPayload(structured), toPayload(text)].filter((p): p is Payload => p !== null);
}

/** Objects that may carry declared metadata, most specific container last. */
export function metadataObjects(json: unknown): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  firstInMetadata(json, (object) => void out.push(object));
  return out;
}

/**
 * What `read` finds first in the objects that may carry declared metadata (`metadataObjects`, in its order), without
 * listing them: the SDK looks for failure signals this way on every successful call.
 */
export function firstInMetadata<T>(
  json: unknown,
  read: (object: Record<string, unknown>) => T | null | undefined,
  depth = 2,
): T | null {
  if (!isRecord(json)) return null;
  const found = read(json);
  if (found !== null && found !== undefined) return found;
  if (depth === 0) return null;
  return (
    firstInMetadata(json['error'], read, depth - 1) ??
    firstInMetadata(json['_meta'], read, depth - 1) ??
    firstInMetadata(json['structuredContent'], read, depth - 1)
  );
}

const SLASH = 0x2f;

/**
 * Value of `key` in `object`, also under a namespaced key ending in `/key`. Most keys looked up are absent, and the
 * SDK looks up a few dozen on every failed call: the scan allocates neither a key list nor a `/key` string.
 */
function lookup(object: Record<string, unknown>, key: string): unknown {
  if (key in object) return object[key];
  for (const k in object) {
    if (
      k.length > key.length &&
      k.charCodeAt(k.length - key.length - 1) === SLASH &&
      k.endsWith(key) &&
      Object.hasOwn(object, k)
    ) {
      return object[k];
    }
  }
  return undefined;
}

/** All values of the keys, key order first, then object order. */
function valuesOf(objects: readonly Record<string, unknown>[], keys: readonly string[]): unknown[] {
  const out: unknown[] = [];
  for (const key of keys) {
    for (const object of objects) {
      const value = lookup(object, key);
      if (value !== undefined && value !== null) out.push(value);
    }
  }
  return out;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Compiled `"key": value` patterns by value pattern, then key: built once, not on every call. */
const pairPatterns = new Map<string, Map<string, RegExp>>();

function pairPattern(key: string, value: string): RegExp {
  let byKey = pairPatterns.get(value);
  if (byKey === undefined) pairPatterns.set(value, (byKey = new Map()));
  let pattern = byKey.get(key);
  if (pattern === undefined) {
    pattern = new RegExp(`"(?:[^"\\\\]*/)?${escapeRegExp(key)}"\\s*:\\s*${value}`, 'g');
    byKey.set(key, pattern);
  }
  return pattern;
}

/** `"key": <value>` pairs in a text that is not valid JSON (e.g. truncated). */
function scanValues(raw: string, keys: readonly string[], value: string): string[] {
  if (!raw.includes('"')) return [];
  const out: string[] = [];
  for (const key of keys) {
    for (const match of raw.matchAll(pairPattern(key, value))) {
      const captured = match.slice(1).find((group) => group !== undefined);
      if (captured !== undefined) out.push(captured);
    }
  }
  return out;
}

const STRING_VALUE = '"((?:[^"\\\\]|\\\\.)*)"';

/** What the first payload that declares it says; those after it are not read (the SDK runs this per failed call). */
export function firstDeclared<T>(
  payloads: readonly Payload[],
  read: (payload: Payload) => T | null,
): T | null {
  for (const payload of payloads) {
    const value = read(payload);
    if (value !== null) return value;
  }
  return null;
}

/** Declared category values (raw), most specific key first. */
export function declaredCategories(payload: Payload): string[] {
  if (payload.json === undefined) return scanValues(payload.raw, CATEGORY_KEYS, STRING_VALUE);
  return valuesOf(metadataObjects(payload.json), CATEGORY_KEYS).filter(
    (v): v is string => typeof v === 'string',
  );
}

export function declaredRetryable(payload: Payload): boolean | null {
  const values =
    payload.json === undefined
      ? scanValues(payload.raw, RETRYABLE_KEYS, '(true|false)').map((v) => v === 'true')
      : valuesOf(metadataObjects(payload.json), RETRYABLE_KEYS);
  const found = values.find((v): v is boolean => typeof v === 'boolean');
  return found ?? null;
}

/** Whether the payload carries a non-empty customer-facing explanation (CUSTOMER_EXPLANATION_KEYS). */
export function declaresCustomerExplanation(payload: Payload): boolean {
  if (payload.json === undefined)
    return scanValues(payload.raw, CUSTOMER_EXPLANATION_KEYS, STRING_VALUE).some((v) => v.trim() !== '');
  return valuesOf(metadataObjects(payload.json), CUSTOMER_EXPLANATION_KEYS).some(
    (v) => typeof v === 'string' && v.trim() !== '',
  );
}

/** Declared error codes (strings; numbers as decimal strings). */
export function declaredCodes(payload: Payload): string[] {
  const values =
    payload.json === undefined
      ? scanValues(payload.raw, CODE_KEYS, `(?:${STRING_VALUE}|(-?\\d+))`)
      : valuesOf(metadataObjects(payload.json), CODE_KEYS);
  return values.flatMap((v) => (typeof v === 'string' ? [v] : typeof v === 'number' ? [String(v)] : []));
}

/** HTTP statuses (100–599) declared in the payload (`statusCode`, `status`, …). */
export function declaredHttpStatuses(payload: Payload): number[] {
  const values =
    payload.json === undefined
      ? scanValues(payload.raw, HTTP_STATUS_KEYS, '"?(\\d{3})\\b')
      : valuesOf(metadataObjects(payload.json), HTTP_STATUS_KEYS);
  return values.map((v) => toInt(v)).filter((n): n is number => n !== null && n >= 100 && n <= 599);
}

/** The first delay, key order first, then object order; the objects' values are read in place (per failed call). */
export function declaredRetryAfterMs(payload: Payload): number | null {
  const objects = payload.json === undefined ? null : metadataObjects(payload.json);
  for (const [key, factor] of RETRY_AFTER_KEYS) {
    if (objects === null) {
      for (const value of scanValues(payload.raw, [key], '(\\d+(?:\\.\\d+)?)')) {
        const ms = delayMs(value, factor);
        if (ms !== null) return ms;
      }
      continue;
    }
    for (const object of objects) {
      const ms = delayMs(lookup(object, key), factor);
      if (ms !== null) return ms;
    }
  }
  return null;
}

/** A declared delay in milliseconds (`factor` per unit of its key), or null for what is none. */
function delayMs(value: unknown, factor: number): number | null {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN;
  const ms = Math.round(n * factor);
  // Sent and stored as an integer: a value past that range says nothing a retry could wait for.
  return n >= 0 && Number.isSafeInteger(ms) ? ms : null;
}

/** Every string value of a JSON payload (keys excluded), or the raw text when it is not JSON. */
export function humanStrings(payload: Payload, limit = 256): string[] {
  if (payload.json === undefined) return [payload.raw];
  const out: string[] = [];
  const visit = (value: unknown): void => {
    if (out.length >= limit) return;
    if (typeof value === 'string') out.push(value);
    else if (Array.isArray(value)) value.forEach(visit);
    else if (isRecord(value)) Object.values(value).forEach(visit);
  };
  visit(payload.json);
  return out;
}
