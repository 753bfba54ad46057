/**
 * PostgreSQL text and jsonb cannot hold U+0000, nor jsonb a lone UTF-16 surrogate, which OTLP/JSON strings may
 * carry. Stored text gets U+FFFD in their place (the usual replacement character) instead of failing the whole
 * request. (Text columns get lone surrogates as U+FFFD already: UTF-8 encoding replaces them.)
 */
const REPLACEMENT = '\uFFFD';

export function withoutNul(text: string | null): string | null {
  return text !== null && text.includes('\u0000') ? text.replaceAll('\u0000', REPLACEMENT) : text;
}

/** An escaped `\u0000` in JSON text, not preceded by an escaping backslash of its own. */
const ESCAPED_NUL = /(?<=(?:^|[^\\])(?:\\\\)*)\\u0000/g;
/**
 * An escaped UTF-16 surrogate: `JSON.stringify` writes a well-formed pair as it is and escapes a lone one, which
 * jsonb refuses ("Unicode low surrogate must follow a high surrogate"), failing the whole request.
 */
const ESCAPED_LONE_SURROGATE = /(?<=(?:^|[^\\])(?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g;

/** JSON text that jsonb accepts: `JSON.stringify`, with every NUL and lone surrogate escape replaced by U+FFFD. */
export function jsonForPostgres(value: unknown): string {
  let json = JSON.stringify(value);
  if (json.includes('\\u0000')) json = json.replace(ESCAPED_NUL, '\\ufffd');
  if (json.includes('\\ud')) json = json.replace(ESCAPED_LONE_SURROGATE, '\\ufffd');
  return json;
}
