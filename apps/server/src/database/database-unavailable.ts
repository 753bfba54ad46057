/**
 * A database failure that says nothing about the request or the records: PostgreSQL unreachable, restarting,
 * saturated, or briefly in the way (a serialization failure, a lock or statement timeout). The caller should come
 * back later. pg's own client errors for a dropped connection carry no code, only their message.
 */
const TRANSIENT_PG_CLASSES = new Set(['08', '53', '57']);
const TRANSIENT_PG_CODES = new Set(['40001', '40P01', '55P03', '25P03', '58000', '58030']);
const TRANSIENT_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);
const TRANSIENT_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|not queryable|Query read timeout/i;

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (TRANSIENT_NODE_CODES.has(code) || TRANSIENT_PG_CODES.has(code)) return true;
    if (code.length === 5 && TRANSIENT_PG_CLASSES.has(code.slice(0, 2))) return true;
  }
  return TRANSIENT_MESSAGES.test(error.message);
}
