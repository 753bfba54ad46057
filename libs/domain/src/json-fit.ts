/**
 * A JSON value too large for the text limit, shrunk until its JSON fits: long strings shortened, long lists cut
 * to their first items, deep nesting replaced, every key kept. Cutting the JSON text instead would leave text
 * that no longer parses, and `{"ok": false, "error": {…}, "rows": [… 2 MB …]}` would lose the `ok` and `error`
 * that say the call failed (DOMAIN.md §3). Pure: the value is only read.
 */
import { utf8ByteLength } from './redaction';

/** Ever smaller shapes, tried in turn: characters kept per string, items per list, levels of nesting. */
const SHAPES = [
  { chars: 512, items: 20, depth: 8 },
  { chars: 128, items: 5, depth: 6 },
  { chars: 32, items: 2, depth: 4 },
  { chars: 8, items: 1, depth: 3 },
] as const;

type Shape = (typeof SHAPES)[number];

const CUT = '…';

function shrink(value: unknown, shape: Shape, depth: number): unknown {
  if (typeof value === 'string')
    return value.length > shape.chars ? value.slice(0, shape.chars) + CUT : value;
  if (typeof value !== 'object' || value === null) return value;
  const toJSON = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof toJSON === 'function') return shrink(toJSON.call(value), shape, depth);
  if (depth >= shape.depth) return CUT;
  if (Array.isArray(value)) {
    const kept: unknown[] = value.slice(0, shape.items).map((item) => shrink(item, shape, depth + 1));
    if (value.length > shape.items) kept.push(`${CUT} ${value.length - shape.items} more`);
    return kept;
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = shrink(item, shape, depth + 1);
  return out;
}

/**
 * `value` as JSON of at most `maxBytes` UTF-8 bytes, shrunk as little as the limit allows, with the shrunk value
 * itself; null when even the smallest shape does not fit (thousands of keys), or the value is no JSON object or
 * list.
 */
export function fitJson(value: unknown, maxBytes: number): { text: string; value: unknown } | null {
  if (typeof value !== 'object' || value === null) return null;
  for (const shape of SHAPES) {
    let shrunk: unknown;
    let text: string | undefined;
    try {
      shrunk = shrink(value, shape, 0);
      text = JSON.stringify(shrunk);
    } catch {
      return null; // a value JSON.stringify refuses (a BigInt): the caller keeps its own text
    }
    if (text !== undefined && utf8ByteLength(text) <= maxBytes) return { text, value: shrunk };
  }
  return null;
}
