/**
 * A database failure that says nothing about the request or the records, and that a later attempt can get past:
 * PostgreSQL unreachable (its host name not resolving too: a compose service's name while its container restarts),
 * restarting, not accepting connections to the database or out of connections, a serialization failure, a deadlock
 * or a lock it could not get. pg's own client errors for a dropped connection carry no code, only their message.
 * Not a statement timeout, memory or disk exhausted: the same request can hit those every time, and must not be
 * retried forever.
 */
const TRANSIENT_PG_CODES = new Set([
  '08000',
  '08001',
  '08003',
  '08006',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '40001',
  '40P01',
  '55P03',
  '25P03',
]);
const TRANSIENT_NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// 55000 is also a statement's error in other states; only this one of it is a connection refused for now.
const TRANSIENT_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|not queryable|Query read timeout|is not currently accepting connections/i;

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (TRANSIENT_NODE_CODES.has(code) || TRANSIENT_PG_CODES.has(code)))
    return true;
  return TRANSIENT_MESSAGES.test(error.message);
}

/**
 * Seconds a client is asked to wait before trying again when the database cannot take a request just now: short,
 * since an OTel exporter retries only when Retry-After fits in its export deadline (10 s by default).
 */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Out of disk, memory or another resource, or a statement cut off (statement_timeout, a cancel). */
const EXHAUSTED_PG_CODES = new Set(['53000', '53100', '53200', '53400', '57014']);

/**
 * The database could not take this request just now, through no fault of the request: its disk or memory ran out,
 * or a statement was cut off by `statement_timeout`. The same request can succeed later, once space is freed or the
 * load falls; unlike `isDatabaseUnavailable`, it can also fail every time, so only a caller whose client gives up
 * by itself (an OTLP exporter's bounded retries) should ask for another attempt.
 */
export function isDatabaseExhausted(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (EXHAUSTED_PG_CODES.has(code) || code === 'ENOSPC')) return true;
  return /No space left on device/i.test(error.message); // PGlite's file system
}

/**
 * PostgreSQL canceled the statement (57014): past `statement_timeout`, which the server sets to
 * ERRATA_PG_QUERY_TIMEOUT_MS, or by an operator's `pg_cancel_backend`. Mostly a statement that waited on a lock (a
 * prune's, a migration's) or on a database too busy to answer in time, as a stalled network path's 'Query read
 * timeout' is. Errata's own cancel of a read whose client went away never comes here: that read fails as
 * `CallerGoneError` (abandoned-reads.ts).
 */
export function isStatementCanceled(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === '57014';
}

/** Codes of a connection that never opened: no such database or role, a wrong password (an unknown host above). */
const CONNECTION_CODES = new Set(['3D000', '28000', '28P01']);

/** The connection failed, as opposed to a statement: unavailable as above, or refused for good at connect time. */
export function isConnectionFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return isDatabaseUnavailable(error) || (typeof code === 'string' && CONNECTION_CODES.has(code));
}
