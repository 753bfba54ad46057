/**
 * PostgreSQL text and jsonb cannot hold U+0000, nor jsonb a lone UTF-16 surrogate, which OTLP/JSON strings may
 * carry. Stored text gets U+FFFD in their place (the usual replacement character) instead of failing the whole
 * request. (Text columns get lone surrogates as U+FFFD already: UTF-8 encoding replaces them.)
 */
const REPLACEMENT = '\uFFFD';

export function withoutNul(text: string | null): string | null {
  return text !== null && text.includes('\u0000') ? text.replaceAll('\u0000', REPLACEMENT) : text;
}

/**
 * The escapes of JSON text, read left to right, so that an escaped backslash is never taken for the start of an
 * escape: `\u0000`, and `\ud800`–`\udfff`, which `JSON.stringify` writes only for a lone UTF-16 surrogate (a
 * well-formed pair is written as it is), are what jsonb refuses ("Unicode low surrogate must follow a high
 * surrogate"). A lookbehind for the backslashes before each escape cost time quadratic in a run of backslashes.
 */
const JSON_ESCAPE = /\\(?:u0000|ud[89a-f][0-9a-f]{2}|[\s\S])/g;

/** JSON text that jsonb accepts: `JSON.stringify`, with every NUL and lone surrogate escape replaced by U+FFFD. */
export function jsonForPostgres(value: unknown): string {
  const json = JSON.stringify(value);
  if (!json.includes('\\u0000') && !json.includes('\\ud')) return json;
  return json.replace(JSON_ESCAPE, (escape) => (escape.length === 6 ? '\\ufffd' : escape));
}
