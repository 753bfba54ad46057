/**
 * The REST API as the dashboard reads it: every request carries the read key from session storage (never the
 * URL), and failures come back as ApiError with the server's own message.
 */
const READ_KEY = 'errata.readKey';

export const readKey = {
  get: (): string | null => sessionStorage.getItem(READ_KEY),
  set: (key: string): void => sessionStorage.setItem(READ_KEY, key),
  clear: (): void => sessionStorage.removeItem(READ_KEY),
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export type Params = Readonly<Record<string, string | null | undefined>>;

function apiUrl(path: string, params: Params = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value) search.set(name, value);
  const query = search.toString();
  return query === '' ? path : `${path}?${query}`;
}

/** How long a request may take before the view gives up and offers to try again. */
export const REQUEST_TIMEOUT_MS = 30_000;

export async function getJson<T>(
  path: string,
  params: Params = {},
  key: string | null = readKey.get(),
  signal?: AbortSignal,
): Promise<T> {
  // A request that never answers (a hung server or proxy) would leave the spinner for good: it is abandoned after
  // REQUEST_TIMEOUT_MS, its body included. A timer rather than AbortSignal.timeout, which a test's clock cannot move.
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), REQUEST_TIMEOUT_MS);
  const cancel = () => timeout.abort();
  signal?.addEventListener('abort', cancel);
  const timedOut = () =>
    new ApiError(0, `Errata did not answer within ${REQUEST_TIMEOUT_MS / 1_000} seconds.`);
  try {
    let response: Response;
    try {
      response = await fetch(apiUrl(path, params), {
        headers: { accept: 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        signal: timeout.signal,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      if (timeout.signal.aborted) throw timedOut();
      throw new ApiError(0, 'Errata did not answer. Is the service running?');
    }
    try {
      if (!response.ok) {
        const body = (await response.json().catch(() => null)) as { message?: unknown } | null;
        const message = Array.isArray(body?.message) ? body.message.join('; ') : body?.message;
        throw new ApiError(response.status, typeof message === 'string' ? message : response.statusText);
      }
      return (await response.json()) as T;
    } catch (error) {
      if (!signal?.aborted && timeout.signal.aborted) throw timedOut();
      throw error;
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', cancel);
  }
}

/** Listeners told when the key stops working, so the app can ask for another. */
const rejected = new Set<() => void>();
export const onKeyRejected = (listener: () => void): (() => void) => {
  rejected.add(listener);
  return () => rejected.delete(listener);
};
export function keyRejected(): void {
  readKey.clear();
  for (const listener of rejected) listener();
}
