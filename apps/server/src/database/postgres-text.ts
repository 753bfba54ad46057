/**
 * PostgreSQL text and jsonb cannot hold U+0000, which OTLP strings may carry. Stored text gets U+FFFD in its
 * place (the usual replacement character) instead of failing the whole request.
 */
const REPLACEMENT = '\uFFFD';

export function withoutNul(text: string | null): string | null {
  return text !== null && text.includes('\u0000') ? text.replaceAll('\u0000', REPLACEMENT) : text;
}

/** An escaped `\u0000` in JSON text, not preceded by an escaping backslash of its own. */
const ESCAPED_NUL = /(?<=(?:^|[^\\])(?:\\\\)*)\\u0000/g;

/** JSON text that jsonb accepts: `JSON.stringify`, with every NUL escape replaced. */
export function jsonForPostgres(value: unknown): string {
  const json = JSON.stringify(value);
  return json.includes('\\u0000') ? json.replace(ESCAPED_NUL, '\\ufffd') : json;
}
