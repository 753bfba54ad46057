/**
 * Redaction and truncation of every text Errata stores (DOMAIN.md §6). Runs on each stored text at ingest
 * rate, so every pattern is compiled once, and gated by a cheap test where one is cheaper than the pattern (the
 * API-key pattern's alternatives are each anchored on a literal prefix: it is its own gate).
 */

export type RedactionKind =
  | 'private_key'
  | 'jwt'
  | 'bearer'
  | 'authorization'
  | 'api_key'
  | 'password'
  | 'secret'
  | 'email'
  | 'number'
  | 'nested';

/** The stable placeholder that replaces a secret of the given kind, e.g. `[REDACTED:email]`. */
export const redactionPlaceholder = (kind: RedactionKind): string => `[REDACTED:${kind}]`;

const PLACEHOLDER = {
  privateKey: redactionPlaceholder('private_key'),
  jwt: redactionPlaceholder('jwt'),
  bearer: redactionPlaceholder('bearer'),
  authorization: redactionPlaceholder('authorization'),
  apiKey: redactionPlaceholder('api_key'),
  password: redactionPlaceholder('password'),
  secret: redactionPlaceholder('secret'),
  email: redactionPlaceholder('email'),
  number: redactionPlaceholder('number'),
  nested: redactionPlaceholder('nested'),
};

/**
 * JSON nested deeper than this is replaced, not walked: a payload of thousands of nested arrays parses, yet
 * walking it recursively would overflow the stack. Error payloads carry their fields a few levels deep.
 */
const MAX_REDACTED_JSON_DEPTH = 64;

/** Nothing shorter than this can hold a secret we look for (`a@b.co` is 6). */
const MIN_REDACTABLE_LENGTH = 6;

const PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g;
const JWT = /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;
/** After `Bearer`, a space, also URL-encoded (`Authorization=Bearer%20…`, as OTEL_EXPORTER_OTLP_HEADERS writes it). */
const BEARER = /\b(bearer(?:\s+|%20))([A-Za-z0-9._~+/-]+=*)/gi;
/**
 * An `Authorization:` header value: always after a known scheme (Basic, Bearer, Digest, …), and a bare value unless
 * it reads as a word (`authorization: required`).
 */
const AUTHORIZATION =
  /\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?)((?:basic|bearer|digest|token|negotiate|ntlm|hoba|mutual|aws4-hmac-sha256)(?:\s+|%20))?([A-Za-z0-9._~+/-]{8,}=*)/gi;
/**
 * Whether a value after `Bearer` or a bare `Authorization:` reads as an English word ("the bearer of this card",
 * "authorization: required"), which an error text needs to keep, rather than as a credential: letters only, a
 * capital at most first, and shorter than any token. A mixed-case, long, or non-letter value is a credential.
 */
const readsAsWord = (value: string): boolean => value.length < 16 && /^[A-Za-z][a-z]*$/.test(value);
const API_KEY = new RegExp(
  [
    String.raw`\bsk-[A-Za-z0-9_-]{16,}`, // OpenAI, Anthropic (sk-ant-…), sk-proj-…
    String.raw`\b[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}`, // Stripe
    String.raw`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`, // AWS access key ids
    String.raw`\bgh[pousr]_[A-Za-z0-9]{20,}`, // GitHub tokens
    String.raw`\bgithub_pat_[A-Za-z0-9_]{20,}`,
    String.raw`\bxox[abposr]-[A-Za-z0-9-]{10,}`, // Slack
    String.raw`\bAIza[0-9A-Za-z_-]{35}`, // Google API keys
    String.raw`\berrata_[a-z]+_[A-Za-z0-9_-]{20,}`, // Errata's own keys (errata_<scope>_<32 base64url>)
  ].join('|'),
  'g',
);
/**
 * `scheme://user:password@`. The scheme is bounded (real ones are short): unbounded, every word boundary in a long
 * run of `a.a.a.…` started a scan to its end, and 100 KB of it took 7.5 s.
 */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]{0,31}:\/\/[^\s:/?#@]{0,256}:)([^\s@/?#]{1,256})@/gi;
/**
 * Key names whose value is a secret; a prefix (`db_password`, `csrf_token`, `client_secret`) counts as the same key.
 * Any `*_key` / `*-key` / `*.key` name is one (`aws_secret_access_key`, `private_key`, `STRIPE_KEY`): which of them
 * are secrets cannot be told from the name, and over-redaction is preferred to leaks. `key` alone, `keyboard` and
 * `monkey` are not.
 */
const SECRET_KEYWORD = String.raw`(?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|apikey|(?:access|secret|private|signing|encryption|master)[_-]?key|[_.-]key)`;
/**
 * `"password": "…"` / `'token': '…'` (JSON and friends), also when the text ends inside the value: JSON a producer
 * cut short (`{"api_key":"sk_abc…`) is not parsed, and its last value would otherwise be kept.
 */
const KV_QUOTED = new RegExp(
  String.raw`(["'])([A-Za-z0-9_.-]*?${SECRET_KEYWORD})\1(\s*:\s*)(["'])((?:\\.|(?!\4)[^\\])*)(?:\4|$)`,
  'gi',
);
/** `"password": 482913` in text that is not JSON as a whole (JSON inside a log line, a second text block). */
const KV_QUOTED_NUMBER = new RegExp(
  String.raw`(["'])([A-Za-z0-9_.-]*?${SECRET_KEYWORD})\1(\s*:\s*)(-?\d[\d.eE+-]*)`,
  'gi',
);
/** Digits a number under a token or secret key needs to be taken for a secret (an OTP has 6). */
const MIN_SECRET_NUMBER_DIGITS = 6;
/**
 * A value after `=` or `:`: quoted, to its closing quote on the same line (spaces and all); after an opening quote
 * that is not closed on its line (a text cut off), to the end of the line: over-redaction rather than a leak; or
 * bare, to a space or separator. An empty value (`password=""`) is none: nothing leaked.
 */
const KV_VALUE = String.raw`(?:(["'])((?:\\.|(?!\3)[^\\\n])+)\3|(["'])(?![^\n]*\5)([^\n]+)|([^\s"'&,;]+))`;
/** `password=…`, `?token=…` (query strings, env files, logs). Anchored on the keyword: fast to scan. */
const KV_EQUALS = new RegExp(String.raw`(${SECRET_KEYWORD})(\s*=\s*)${KV_VALUE}`, 'gi');
/** `password: …`, `token:"…"`: an unquoted value only when it looks like a secret (has a non-letter), not like prose. */
const KV_COLON = new RegExp(String.raw`(${SECRET_KEYWORD})(:[ \t]*)${KV_VALUE}`, 'gi');
const SECRET_KEY_GATE = /pass|pwd|secret|token|key/i;
/**
 * A `Cookie:` or `Set-Cookie:` header line (at the start of a line, as a request dump writes it): every value in it
 * is a session's, to the end of the line. Prose ("invalid cookie: expired") is left to read.
 */
const COOKIE_HEADER = /^([ \t]*(?:set-)?cookie:[ \t]*)\S[^\r\n]*/gim;
const COOKIE_GATE = /cookie:/i;
const AUTHORIZATION_GATE = /authorization/i;
const BEARER_GATE = /bearer/i;
/**
 * A JSON key whose value is a secret whatever it looks like (`api_key`, `db_password`, not `max_tokens`), and the
 * headers an HTTP client's error dump holds credentials in (`{"headers": {"Authorization": "Basic …"}}`), whose value
 * alone does not say what it is.
 */
const SECRET_JSON_KEY = new RegExp(
  String.raw`^(?:[A-Za-z0-9_.-]*?${SECRET_KEYWORD}|(?:proxy-)?authorization|(?:set-)?cookie|credentials?|pass)$`,
  'i',
);
/** An e-mail address's `@`, also escaped as JSON (`\u0040`) or in a URL (`%40`) in a text that is not decoded. */
const AT_SIGN = /@|\\u0040|%40/gi;
/** The part of an e-mail address after `@`, matched from there (sticky). */
const EMAIL_DOMAIN = /[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b/y;
/** Characters of an address's local part ([A-Za-z0-9._%+-]). */
const isLocalPartChar = (c: number): boolean =>
  (c >= 0x61 && c <= 0x7a) ||
  (c >= 0x41 && c <= 0x5a) ||
  (c >= 0x30 && c <= 0x39) ||
  c === 0x2e ||
  c === 0x5f ||
  c === 0x25 ||
  c === 0x2b ||
  c === 0x2d;
const CARD = /\b\d{4}(?:[ -]\d{4}){3}\b|\b\d{4}[ -]\d{6}[ -]\d{5}\b/g;
const DIGIT_RUN = /(?<!\d)\d{8,}(?!\d)/g;
const DIGIT_GATE = /\d{4}/;

const isPassword = (keyName: string): boolean => /pass|pwd/i.test(keyName);

/**
 * Replaces secrets and personal data with stable placeholders: private keys, JWTs, bearer tokens and other
 * `Authorization` header values, API
 * keys (`sk-…`, `AKIA…`, `ghp_…`, `xox…`, Stripe, Google), passwords in URLs and `password=`-style pairs
 * (also `secret`, `token`, `api_key`, `*_key`), e-mail addresses, card-like digit groups and runs of 8+ digits.
 * Idempotent: redact(redact(x)) === redact(x).
 */
export function redact(text: string): string {
  const out = redactCredentials(text);
  if (!DIGIT_GATE.test(out)) return out;
  const numbers = out.replace(CARD, PLACEHOLDER.number).replace(DIGIT_RUN, PLACEHOLDER.number);
  // A number replaced may end a word a secret's pattern needs ended (`1234567890Bearer abc…`, `a@b.co12345678`): what
  // the next redaction would then find, this one does (the placeholder joins no digits, so once is enough).
  return numbers === out ? out : redactCredentials(numbers);
}

/**
 * An identifier (a session, request or conversation id) as stored: credentials and e-mail addresses are replaced as
 * `redact` replaces them, digits are not. Ids are made of digits (a UUID whose first group is all digits, a request
 * counter, a timestamped id), and the digit-run rule mangled one session id in fifty, so a stored id no longer
 * equalled the server's.
 */
export function redactIdentifier(text: string): string {
  return redactCredentials(text);
}

function redactCredentials(text: string): string {
  if (text.length < MIN_REDACTABLE_LENGTH) return text;
  let out = text;
  if (out.includes('PRIVATE KEY-----')) out = out.replace(PRIVATE_KEY, PLACEHOLDER.privateKey);
  if (out.includes('eyJ')) out = out.replace(JWT, PLACEHOLDER.jwt);
  if (BEARER_GATE.test(out)) {
    out = out.replace(BEARER, (match, prefix: string, token: string) =>
      token.length >= 8 && !readsAsWord(token) ? prefix + PLACEHOLDER.bearer : match,
    );
  }
  if (AUTHORIZATION_GATE.test(out)) {
    out = out.replace(AUTHORIZATION, (match, prefix: string, scheme: string | undefined, value: string) =>
      scheme !== undefined || !readsAsWord(value)
        ? `${prefix}${scheme ?? ''}${PLACEHOLDER.authorization}`
        : match,
    );
  }
  out = out.replace(API_KEY, PLACEHOLDER.apiKey);
  if (out.includes('://')) out = out.replace(URL_PASSWORD, `$1${PLACEHOLDER.password}@`);
  if (SECRET_KEY_GATE.test(out)) {
    out = out.replace(
      KV_QUOTED,
      // (a value redacted already is kept: one a cut left unclosed stays so, not closed by a second redaction)
      (match, q: string, key: string, sep: string, vq: string, value: string) =>
        value.startsWith('[REDACTED:')
          ? match
          : `${q}${key}${q}${sep}${vq}${isPassword(key) ? PLACEHOLDER.password : PLACEHOLDER.secret}${vq}`,
    );
    // Quoted, as the JSON path writes it: the text stays valid JSON where it was.
    // A password whatever its length; under a token or secret key only a number long enough to be one, so that
    // `"cached_token": 0` in an error text is not a leaked secret (a leaky-error finding).
    out = out.replace(KV_QUOTED_NUMBER, (match, q: string, key: string, sep: string, value: string) =>
      isPassword(key) || value.replace(/\D/g, '').length >= MIN_SECRET_NUMBER_DIGITS
        ? `${q}${key}${q}${sep}"${isPassword(key) ? PLACEHOLDER.password : PLACEHOLDER.secret}"`
        : match,
    );
    out = out.replace(
      KV_EQUALS,
      (match, key: string, sep: string, ...value: (string | undefined)[]) =>
        secretValue(key, sep, value, false) ?? match,
    );
    out = out.replace(
      KV_COLON,
      (match, key: string, sep: string, ...value: (string | undefined)[]) =>
        secretValue(key, sep, value, true) ?? match,
    );
  }
  if (COOKIE_GATE.test(out))
    out = out.replace(COOKIE_HEADER, (match, prefix: string) =>
      match.slice(prefix.length).startsWith('[REDACTED:') ? match : `${prefix}${PLACEHOLDER.secret}`,
    );
  if (out.search(AT_SIGN) >= 0) out = redactEmails(out);
  return out;
}

/**
 * What a `key=value` / `key: value` pair becomes, from KV_VALUE's groups (quote and quoted value, or bare value): the
 * key and its placeholder, quoted as the value was; null to keep it (redacted already, or a bare word after a colon,
 * which is prose: `password: required`).
 */
function secretValue(
  key: string,
  sep: string,
  [quote, quoted, openQuote, unclosed, bare]: (string | undefined)[],
  proseAllowed: boolean,
): string | null {
  const value = quoted ?? unclosed ?? bare ?? '';
  if (value.startsWith('[REDACTED:')) return null;
  if (proseAllowed && quote === undefined && !openQuote && !/[^A-Za-z]/.test(value)) return null;
  const placeholder = isPassword(key) ? PLACEHOLDER.password : PLACEHOLDER.secret;
  return quote === undefined
    ? `${key}${sep}${openQuote ?? ''}${placeholder}`
    : `${key}${sep}${quote}${placeholder}${quote}`;
}

/** E-mail addresses, scanned from each `@` rather than tried at every position: most texts have none. */
function redactEmails(text: string): string {
  let out = '';
  let copied = 0;
  AT_SIGN.lastIndex = 0;
  for (let at = AT_SIGN.exec(text); at !== null; at = AT_SIGN.exec(text)) {
    let start = at.index;
    while (start > copied && isLocalPartChar(text.charCodeAt(start - 1))) start--;
    if (start === at.index) continue;
    EMAIL_DOMAIN.lastIndex = at.index + at[0].length;
    if (EMAIL_DOMAIN.exec(text) === null) continue;
    out += text.slice(copied, start) + PLACEHOLDER.email;
    copied = EMAIL_DOMAIN.lastIndex;
    AT_SIGN.lastIndex = copied;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * Redacts a text that may be JSON (a `structuredContent` serialization or its text mirror) without
 * breaking it: when it parses, every string (keys included) is redacted, the value of a secret-named key
 * (`password`, `api_key`, `*_token`, …) is replaced whatever it looks like (a list or object too), and every number
 * holding a run of 8+ digits becomes the `[REDACTED:number]` string, and whatever is nested deeper than
 * MAX_REDACTED_JSON_DEPTH becomes `[REDACTED:nested]`; the result is re-serialized compactly. Anything else (plain
 * text, or JSON already cut by truncation) goes through `redact`.
 */
export function redactPayload(text: string): string {
  if (text.length < MIN_REDACTABLE_LENGTH) return text;
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return redact(text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return redact(text);
  }
  return JSON.stringify(redactJsonValue(parsed, 0));
}

/** A parsed JSON value redacted as `redactPayload` redacts JSON text: the value itself is only read. */
export const redactJson = (value: unknown): unknown => redactJsonValue(value, 0);

function redactJsonValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redact(value);
  if (typeof value === 'number') return /\d{8,}/.test(String(value)) ? PLACEHOLDER.number : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_REDACTED_JSON_DEPTH) return PLACEHOLDER.nested;
  if (Array.isArray(value)) return value.map((item) => redactJsonValue(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    // Whatever the value holds, a list or an object included (`"password": ["…"]`, `"token": {"access": "…"}`); only
    // null and booleans, which cannot hold a secret, are kept.
    const secret = inner !== null && typeof inner !== 'boolean' && SECRET_JSON_KEY.test(key);
    out[redact(key)] = secret
      ? isPassword(key)
        ? PLACEHOLDER.password
        : PLACEHOLDER.secret
      : redactJsonValue(inner, depth + 1);
  }
  return out;
}

/** UTF-8 byte length of a string (a lone surrogate counts 3, as the U+FFFD it encodes to). */
export function utf8ByteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * Whether a text fits in `maxBytes` UTF-8 bytes. A cheap upper bound first: a UTF-16 code unit never needs more than
 * 3 UTF-8 bytes, so the common short text skips the byte count altogether.
 */
export const fitsUtf8Bytes = (text: string, maxBytes: number): boolean =>
  text.length * 3 <= maxBytes || utf8ByteLength(text) <= maxBytes;

/** The longest prefix of at most `maxBytes` UTF-8 bytes that ends on a code point boundary. */
function utf8Prefix(text: string, maxBytes: number): { readonly end: number; readonly bytes: number } {
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    let width = 3;
    let units = 1;
    if (c < 0x80) width = 1;
    else if (c < 0x800) width = 2;
    else if (c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      width = 4;
      units = 2;
    }
    if (bytes + width > maxBytes) break;
    bytes += width;
    i += units;
  }
  return { end: i, bytes };
}

const truncationMarker = (droppedBytes: number): string => `…[truncated ${droppedBytes} bytes]`;
/** A cut text's end: the marker, with the count of bytes dropped. */
const TRUNCATION_MARKER = /…\[truncated (\d+) bytes\]$/;

/** A stored text `truncateUtf8` cut short: what followed its marker's place is not known. */
export const wasCut = (text: string): boolean => TRUNCATION_MARKER.test(text);

/**
 * Cuts a text to at most `maxBytes` UTF-8 bytes, never inside a code point. A cut text ends with
 * `…[truncated N bytes]` (N = bytes dropped from the original) and the whole result, marker included,
 * fits in `maxBytes`. When `maxBytes` cannot even hold the marker, the bare prefix is returned.
 */
export function truncateUtf8(text: string, maxBytes: number): string {
  const limit = Number.isFinite(maxBytes) ? Math.max(0, Math.floor(maxBytes)) : 0;
  if (text.length * 3 <= limit) return text;
  const total = utf8ByteLength(text);
  if (total <= limit) return text;
  // The marker for `total` is at least as long as the final one (fewer bytes dropped, fewer digits).
  const markerBudget = utf8ByteLength(truncationMarker(total));
  if (markerBudget > limit) return text.slice(0, utf8Prefix(text, limit).end);
  const kept = utf8Prefix(text, limit - markerBudget);
  return text.slice(0, kept.end) + truncationMarker(total - kept.bytes);
}

/**
 * A stored text redacted again by today's patterns (an upgrade may catch more than the release that stored it):
 * `redactor` is what stored it (`redactPayload` for most texts, `redact` for list items, `redactIdentifier` for ids).
 * Idempotent, and the same text when nothing in it is caught. A cut text keeps its truncation marker: only what
 * comes before it is redacted, and its count of dropped bytes grows by what a new cut drops. A text never grows past
 * `maxBytes`, nor past its own stored length when that is larger (a limit lowered since): it is cut as `storedText`
 * cuts, but never inside a placeholder, which a later run would otherwise take for a value and redact again.
 */
export function redactStoredText(
  stored: string,
  maxBytes: number,
  redactor: (text: string) => string = redactPayload,
): string {
  // A cut may end the text in what reads as a secret only there (`a@b.co` of `a@b.coerrata…`): redacted again until
  // nothing changes, so that the next run finds nothing to do.
  const budget = Math.max(Math.floor(maxBytes), utf8ByteLength(stored));
  let text = stored;
  for (let round = 0; round < MAX_REDACTION_ROUNDS; round++) {
    const again = redactStoredOnce(text, budget, redactor);
    if (again === text) break;
    text = again;
  }
  return text;
}

/** Each round but the first only follows a cut that left a secret at the text's end: a few are plenty. */
const MAX_REDACTION_ROUNDS = 8;

function redactStoredOnce(stored: string, budget: number, redactor: (text: string) => string): string {
  const marker = TRUNCATION_MARKER.exec(stored);
  const body = marker === null ? stored : stored.slice(0, marker.index);
  const redacted = redactor(body);
  if (redacted === body) return stored;
  const dropped = marker === null ? 0 : Number(marker[1]);
  const whole = dropped === 0 ? redacted : redacted + truncationMarker(dropped);
  if (fitsUtf8Bytes(whole, budget)) return whole;
  const redactedBytes = utf8ByteLength(redacted);
  const markerBudget = utf8ByteLength(truncationMarker(redactedBytes + dropped));
  if (markerBudget > budget) return redacted.slice(0, utf8Prefix(redacted, budget).end);
  let { end, bytes } = utf8Prefix(redacted, budget - markerBudget);
  const tail = redacted.slice(Math.max(0, end - 24), end);
  const open = PLACEHOLDER_START_AT_END.exec(tail);
  if (open !== null) {
    end -= tail.length - open.index;
    bytes = utf8ByteLength(redacted.slice(0, end));
  }
  // Cut back to what was stored (all the redaction added was past the cut): the stored text, its count as it was.
  if (marker !== null && end === body.length && redacted.startsWith(body)) return stored;
  return redacted.slice(0, end) + truncationMarker(dropped + redactedBytes - bytes);
}

/** The start of a placeholder at a text's end, cut before its `]`: `[REDACTED:sec`, `[RED`, `[`. */
const PLACEHOLDER_START_AT_END = /\[(?:R(?:E(?:D(?:A(?:C(?:T(?:E(?:D(?::[a-z_]*)?)?)?)?)?)?)?)?)?$/;

/** Redacts, then truncates: what every stored text goes through. Empty → null. */
export function storedText(text: string | null, maxBytes: number): string | null {
  if (text === null || text === '') return null;
  return truncateUtf8(redactPayload(text), maxBytes);
}
