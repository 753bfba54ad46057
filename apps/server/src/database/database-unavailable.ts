/**
 * A database failure that says nothing about the request or the records, and that a later attempt can get past:
 * PostgreSQL unreachable, restarting or out of connections, a serialization failure, a deadlock or a lock it could
 * not get. pg's own client errors for a dropped connection carry no code, only their message. Not a statement
 * timeout, memory or disk exhausted: the same request can hit those every time, and must not be retried forever.
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
const TRANSIENT_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);
const TRANSIENT_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|not queryable|Query read timeout/i;

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (TRANSIENT_NODE_CODES.has(code) || TRANSIENT_PG_CODES.has(code)))
    return true;
  return TRANSIENT_MESSAGES.test(error.message);
}
