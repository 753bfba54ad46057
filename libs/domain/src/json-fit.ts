/**
 * A JSON value too large for the text limit, shrunk until its JSON fits: lists cut to their first items, deep
 * nesting replaced, long strings shortened, every key kept. Cutting the JSON text instead would leave text that no
 * longer parses, and `{"ok": false, "error": {…}, "rows": [… 2 MB …]}` would lose the `ok` and `error` that say
 * the call failed (DOMAIN.md §3). Pure: the value is only read.
 */
import { fitsUtf8Bytes } from './redaction';

/** Ever smaller shapes, tried in turn: items per list, levels of nesting, characters kept per string. */
const SHAPES = [
  { items: 20, depth: 8, chars: 512 },
  { items: 5, depth: 6, chars: 128 },
  { items: 2, depth: 4, chars: 32 },
  { items: 1, depth: 3, chars: 8 },
] as const;

type Shape = (typeof SHAPES)[number];

const CUT = '…';

/** The value with its lists cut and its nesting bounded; strings whole (they are shortened after `prepare`). */
function prune(value: unknown, shape: Shape, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const toJSON = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof toJSON === 'function') return prune(toJSON.call(value), shape, depth);
  if (depth >= shape.depth) return CUT;
  if (Array.isArray(value)) {
    const kept: unknown[] = value.slice(0, shape.items).map((item) => prune(item, shape, depth + 1));
    if (value.length > shape.items) kept.push(`${CUT} ${value.length - shape.items} more`);
    return kept;
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = prune(item, shape, depth + 1);
  return out;
}

function shorten(value: unknown, chars: number): unknown {
  if (typeof value === 'string') return value.length > chars ? value.slice(0, chars) + CUT : value;
  if (Array.isArray(value)) return value.map((item) => shorten(item, chars));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = shorten(item, chars);
  return out;
}

/**
 * `value` as JSON of at most `maxBytes` UTF-8 bytes, shrunk as little as the limit allows, with the shrunk value
 * itself; null when even the smallest shape does not fit (thousands of keys), or the value is no JSON object or
 * list. `prepare` runs on each pruned value before its strings are shortened: redaction, which needs whole strings
 * (a JWT cut in its middle, or an e-mail address, is no longer recognised) and can make them longer.
 */
export function fitJson(
  value: unknown,
  maxBytes: number,
  prepare: (pruned: unknown) => unknown = (pruned) => pruned,
): { text: string; value: unknown } | null {
  if (typeof value !== 'object' || value === null) return null;
  for (const shape of SHAPES) {
    let shrunk: unknown;
    let text: string | undefined;
    try {
      shrunk = shorten(prepare(prune(value, shape, 0)), shape.chars);
      text = JSON.stringify(shrunk);
    } catch {
      return null; // a value JSON.stringify refuses (a BigInt): the caller keeps its own text
    }
    if (text !== undefined && fitsUtf8Bytes(text, maxBytes)) return { text, value: shrunk };
  }
  return null;
}
