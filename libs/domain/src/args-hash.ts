/**
 * The arguments fingerprint of DOMAIN.md §5 (`errata.args.hash` / `errata.args.size`): SHA-256 of the
 * canonical JSON of the arguments, hex, first 16 bytes. Exported so every producer computes the same value.
 */
import * as crypto from 'node:crypto';

import { utf8ByteLength } from './redaction';

/**
 * Canonical JSON: object keys sorted by UTF-16 code units (Array.prototype.sort; integer-like keys too, as
 * strings), no whitespace, values
 * encoded as JSON.stringify does (undefined / functions / symbols dropped from objects, null in arrays;
 * non-finite numbers → null; toJSON honoured). Written out directly, without a sorted deep copy: the SDK
 * computes it on every tool call.
 */
export function canonicalJson(value: unknown): string {
  return serialize(value) ?? 'null';
}

function serialize(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      return value === null ? 'null' : serializeObject(value);
    case 'bigint':
      return JSON.stringify(value); // throws, as JSON.stringify does
    default:
      return undefined;
  }
}

function serializeObject(value: object): string | undefined {
  const toJSON = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof toJSON === 'function') return serialize(toJSON.call(value));
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + (serialize(value[i]) ?? 'null');
    return `${out}]`;
  }
  // Boolean / Number / String objects: JSON.stringify unwraps them.
  if (value instanceof Number || value instanceof String || value instanceof Boolean)
    return JSON.stringify(value);
  const record = value as Record<string, unknown>;
  let out = '{';
  for (const key of sortedKeys(record)) {
    const serialized = serialize(record[key]);
    if (serialized === undefined) continue;
    out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${serialized}`;
  }
  return `${out}}`;
}

/**
 * The object's keys in UTF-16 code-unit order, as `Array.prototype.sort` orders them. Arguments have a few keys, and
 * `sort` allocates a work copy even for those: they are sorted in place, by insertion, up to a dozen.
 */
function sortedKeys(record: object): string[] {
  const keys = Object.keys(record);
  if (keys.length > 12) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
  return keys;
}

export interface ArgsFingerprint {
  /** 32 lowercase hex characters: the first 16 bytes of SHA-256(canonical JSON). */
  readonly hash: string;
  /** UTF-8 byte size of the canonical JSON. */
  readonly size: number;
}

/** One-shot hashing (Node ≥ 20.12) where available: a Hash object costs more than the digest of a short text. */
const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'hex')
    : (text) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

export function argsFingerprint(args: unknown): ArgsFingerprint {
  const json = canonicalJson(args);
  return { hash: sha256Hex(json).slice(0, 32), size: utf8ByteLength(json) };
}
