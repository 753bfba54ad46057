/**
 * The arguments fingerprint of DOMAIN.md §5 (`errata.args.hash` / `errata.args.size`): SHA-256 of the
 * canonical JSON of the arguments, hex, first 16 bytes. Exported so every producer computes the same value.
 */
import { createHash } from 'node:crypto';

import { utf8ByteLength } from './redaction';

/**
 * Canonical JSON: object keys sorted by UTF-16 code units (Array.prototype.sort), no whitespace, values
 * encoded as JSON.stringify does (undefined / functions dropped from objects, null in arrays; non-finite
 * numbers → null; toJSON honoured).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

function sortKeys(value: unknown): unknown {
  if (value !== null && typeof value === 'object') {
    const json = (value as { toJSON?: () => unknown }).toJSON;
    if (typeof json === 'function') return sortKeys(json.call(value));
    if (Array.isArray(value)) return value.map(sortKeys);
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

export interface ArgsFingerprint {
  /** 32 lowercase hex characters: the first 16 bytes of SHA-256(canonical JSON). */
  readonly hash: string;
  /** UTF-8 byte size of the canonical JSON. */
  readonly size: number;
}

export function argsFingerprint(args: unknown): ArgsFingerprint {
  const json = canonicalJson(args);
  return {
    hash: createHash('sha256').update(json, 'utf8').digest('hex').slice(0, 32),
    size: utf8ByteLength(json),
  };
}
