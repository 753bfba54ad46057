/** PostgreSQL COPY text format (https://www.postgresql.org/docs/current/sql-copy.html#id-1.9.3.55.9.2). */

const SPECIAL = /[\\\t\n\r]/;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

export type CopyValue = string | number | boolean | null;

/** One field: `\N` for null, and the four characters COPY treats specially escaped. */
export function copyField(value: CopyValue): string {
  if (value === null) return '\\N';
  const text = String(value);
  return SPECIAL.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]!) : text;
}

/** A `bytea` field from hex (`\x…` input syntax, escaped for COPY). */
export function copyHexBytes(hex: string | null): string {
  return hex === null ? '\\N' : `\\\\x${hex}`;
}

/**
 * A field holding JSON text (from `JSON.stringify`): it never holds a raw tab, newline or carriage return, since
 * JSON escapes them, so only its backslashes need COPY's escaping, found without a regular expression.
 */
export function copyJsonField(json: string): string {
  return json.includes('\\') ? json.replaceAll('\\', '\\\\') : json;
}
