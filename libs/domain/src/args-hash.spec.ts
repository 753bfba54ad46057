import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { argsFingerprint, canonicalJson } from './args-hash';

/** The definition: JSON.stringify of a deep copy whose object keys are sorted. */
function reference(value: unknown): string {
  const sortKeys = (v: unknown): unknown => {
    if (v !== null && typeof v === 'object') {
      const toJSON = (v as { toJSON?: () => unknown }).toJSON;
      if (typeof toJSON === 'function') return sortKeys(toJSON.call(v));
      if (Array.isArray(v)) return v.map(sortKeys);
      if (v instanceof Number || v instanceof String || v instanceof Boolean) return v;
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort()) out[key] = sortKeys((v as Record<string, unknown>)[key]);
      return out;
    }
    return v;
  };
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

/** A seeded generator of JSON-ish values, including the awkward ones. */
function generator(seed: number) {
  let state = seed;
  const next = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const scalars: unknown[] = [
    0,
    -0,
    1.5,
    -42,
    1e21,
    5e-324,
    Number.NaN,
    Infinity,
    '',
    'héllo "quoted" \\ \n\u2028 \ud83d\ude00',
    'ü',
    true,
    false,
    null,
    undefined,
    () => 1,
    Symbol('s'),
    new Date(0),
    new Number(3),
    new String('x'),
    new Boolean(false),
  ];
  // Integer-like keys are left out: a JS object lists them first, in numeric order, whatever the insertion order.
  const keys = ['b', 'a', 'B', 'é', 'a b', '', '__proto__x', 'z', 'x1'];
  const value = (depth: number): unknown => {
    const roll = next();
    if (depth > 3 || roll < 0.4) return pick(scalars);
    if (roll < 0.7) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
    const out: Record<string, unknown> = {};
    for (let i = Math.floor(next() * 5); i > 0; i--) out[pick(keys)] = value(depth + 1);
    return out;
  };
  return value;
}

describe('canonicalJson', () => {
  it('sorts keys at every depth, no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: [3, { z: 1, y: 2 }] } })).toBe(
      '{"a":{"c":[3,{"y":2,"z":1}],"d":2},"b":1}',
    );
  });

  it('equals JSON.stringify of a key-sorted copy, for 5,000 generated values', () => {
    const value = generator(7);
    for (let i = 0; i < 5_000; i++) {
      const input = value(0);
      expect(canonicalJson(input)).toBe(reference(input));
    }
  });

  it('sorts integer-like keys as strings too (a key-sorted object copy would list them first, numerically)', () => {
    expect(canonicalJson({ a: 3, '2': 2, '10': 1 })).toBe('{"10":1,"2":2,"a":3}');
  });

  it('top-level undefined and functions are "null"; BigInt throws like JSON.stringify', () => {
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson(() => 1)).toBe('null');
    expect(() => canonicalJson({ n: 1n })).toThrow(TypeError);
  });
});

describe('argsFingerprint', () => {
  it('is the first 16 bytes of SHA-256 of the canonical JSON, and its UTF-8 size', () => {
    const json = '{"path":"/tmp/ü","q":"refund"}';
    expect(argsFingerprint({ q: 'refund', path: '/tmp/ü' })).toEqual({
      hash: createHash('sha256').update(json).digest('hex').slice(0, 32),
      size: Buffer.byteLength(json),
    });
  });
});
