import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, getJson, keyRejected, type Params } from './api';
import type { Filters } from './route';
import { noSeries, seriesFits, type SeriesResponse } from './series';

export type Loaded<T> =
  | { readonly state: 'loading' }
  | { readonly state: 'error'; readonly error: ApiError }
  | { readonly state: 'ready'; readonly data: T };

/** The retry of every request that failed, while it stays failed. */
const failedRequests = new Set<() => void>();

/**
 * Tries every failed request again. An outage fails more than the view on screen (the filter bar's server and tool
 * lists too): one Try again brings all of them back, not just the view's own figures.
 */
export function retryFailedRequests(): void {
  for (const retry of [...failedRequests]) retry();
}

/**
 * GETs `path` whenever it or its parameters change; a 401 sends the user back to sign in. While it has failed,
 * `retryFailedRequests` tries it again.
 */
export function useApi<T>(path: string | null, params: Params = {}): Loaded<T> & { retry: () => void } {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  const [attempt, setAttempt] = useState(0);
  const key = path === null ? null : `${path}?${JSON.stringify(params)}`;
  useEffect(() => {
    if (path === null) return;
    const controller = new AbortController();
    setLoaded({ state: 'loading' });
    getJson<T>(path, params, undefined, controller.signal).then(
      (data) => setLoaded({ state: 'ready', data }),
      (error: unknown) => {
        if (controller.signal.aborted) return;
        if (error instanceof ApiError && error.status === 401) keyRejected();
        setLoaded({
          state: 'error',
          error: error instanceof ApiError ? error : new ApiError(0, String(error)),
        });
      },
    );
    return () => controller.abort(); // `key` stands for path and params, compared by value
  }, [key, attempt]);
  const retry = useCallback(() => setAttempt((n) => n + 1), []);
  const failed = loaded.state === 'error';
  useEffect(() => {
    if (!failed) return;
    failedRequests.add(retry);
    return () => void failedRequests.delete(retry);
  }, [failed, retry]);
  return { ...loaded, retry };
}

/** Several requests as one: ready when all are, the first error otherwise. */
export function all<T extends Record<string, Loaded<unknown>>>(
  parts: T,
): Loaded<{ [K in keyof T]: T[K] extends Loaded<infer D> ? D : never }> {
  const values = Object.values(parts);
  const failed = values.find((part) => part.state === 'error');
  if (failed) return failed as Loaded<never>;
  if (values.some((part) => part.state === 'loading')) return { state: 'loading' };
  return {
    state: 'ready',
    data: Object.fromEntries(
      Object.entries(parts).map(([name, part]) => [name, (part as { data: unknown }).data]),
    ) as never,
  };
}

/**
 * `GET /api/v1/reports/timeseries` over the filters' window (`params` carry it, and any breakdown). A window longer
 * than the API charts (`seriesFits`: over 1,000 days) is not asked for: its 400 took the page's figures down with it.
 * It reads as a series of no points, `tooLong`: the page shows its figures for the whole window and says why the
 * charts are empty.
 */
export function useSeries(
  filters: Filters,
  params: Params,
): Loaded<SeriesResponse> & { retry: () => void; tooLong: boolean } {
  const tooLong = !seriesFits(filters.from, filters.to);
  const loaded = useApi<SeriesResponse>(tooLong ? null : '/api/v1/reports/timeseries', params);
  if (!tooLong) return { ...loaded, tooLong };
  return { state: 'ready', data: noSeries(filters.from, filters.to), retry: () => undefined, tooLong };
}
