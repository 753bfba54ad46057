/**
 * PostgreSQL unreachable or saturated, as opposed to a failure of the request itself: the caller should come back
 * later, and nothing about its request was wrong.
 */
const UNAVAILABLE_PG_CODES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08006',
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    (UNAVAILABLE_PG_CODES.has(code) || code === 'ECONNREFUSED' || code === 'ECONNRESET')
  ) {
    return true;
  }
  return /timeout exceeded when trying to connect|Connection terminated/i.test(error.message);
}
