/**
 * `GET /reports/retry-waste` (DOMAIN.md §2, §8). The same set of calls gives byte-identical JSON in any input
 * order: calls are ordered before analysis, sums are exact (bigint ns) before one rounding, and groups and
 * reasons come out in a fixed order.
 */
import { analyzeRetries, RETRY_LABELS, type CallFact, type RetryLabel } from './retries';
import { RULES_VERSION } from './rules';

export type RetryWasteGroupBy = 'category' | 'server' | 'tool';

/** Group key for a null server. */
export const UNKNOWN_SERVER = '(unknown)';

export interface RetryWasteTotals {
  readonly calls: number;
  readonly retries: number;
  readonly wastedRetries: number;
  readonly wastedMs: number;
  readonly wastedTokens: number;
  readonly unrecoveredChains: number;
}

export interface RetryWasteGroup {
  readonly key: string;
  readonly retries: number;
  readonly wastedRetries: number;
  readonly wastedMs: number;
  readonly wastedTokens: number;
  readonly unrecoveredChains: number;
  /** Retries per label, every label present (zeros included), in RETRY_LABELS order. */
  readonly reasons: Readonly<Record<RetryLabel, number>>;
}

export interface RetryWasteReport {
  readonly rulesVersion: number;
  readonly totals: RetryWasteTotals;
  readonly groups: readonly RetryWasteGroup[];
}

export interface RetryWasteOptions {
  readonly groupBy: RetryWasteGroupBy;
  readonly windowMs?: number;
}

interface Accumulator {
  retries: number;
  wastedRetries: number;
  wastedNs: bigint;
  wastedTokens: number;
  unrecoveredChains: number;
  reasons: Record<RetryLabel, number>;
}

const newAccumulator = (): Accumulator => ({
  retries: 0,
  wastedRetries: 0,
  wastedNs: 0n,
  wastedTokens: 0,
  unrecoveredChains: 0,
  reasons: Object.fromEntries(RETRY_LABELS.map((label) => [label, 0])) as Record<RetryLabel, number>,
});

/** Nanoseconds → whole milliseconds, half up. */
export const nsToMs = (ns: bigint): number => Number((ns + 500_000n) / 1_000_000n);

/**
 * Group keys: `category` — the retried call's category (transient, validation, business, permission, unknown,
 * empty); `server` — the retried call's server, `(unknown)` when null; `tool` — `server/tool` of the retried
 * call (tool names are only unique per server). Chains count under their first call's key.
 * Groups sort by wastedMs desc, then wastedRetries desc, retries desc, key asc.
 */
export function retryWasteReport(calls: readonly CallFact[], options: RetryWasteOptions): RetryWasteReport {
  const { retries, chains } = analyzeRetries(calls, { windowMs: options.windowMs });
  const keyOf = (category: string, server: string | null, tool: string): string => {
    switch (options.groupBy) {
      case 'category':
        return category;
      case 'server':
        return server ?? UNKNOWN_SERVER;
      case 'tool':
        return `${server ?? UNKNOWN_SERVER}/${tool}`;
    }
  };

  const total = newAccumulator();
  const groups = new Map<string, Accumulator>();
  const groupFor = (key: string): Accumulator => {
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = newAccumulator()));
    return group;
  };
  for (const retry of retries) {
    const group = groupFor(keyOf(retry.retriedCategory, retry.server, retry.tool));
    for (const acc of [group, total]) {
      acc.retries += 1;
      acc.reasons[retry.label] += 1;
      if (retry.wasted) {
        acc.wastedRetries += 1;
        acc.wastedNs += retry.durationNs;
        acc.wastedTokens += retry.tokens ?? 0;
      }
    }
  }
  for (const chain of chains) {
    if (chain.recovered) continue;
    groupFor(keyOf(chain.category, chain.server, chain.tool)).unrecoveredChains += 1;
    total.unrecoveredChains += 1;
  }

  const rows = [...groups].map(([key, acc]) => ({ key, acc, wastedMs: nsToMs(acc.wastedNs) }));
  rows.sort(
    (x, y) =>
      y.wastedMs - x.wastedMs ||
      y.acc.wastedRetries - x.acc.wastedRetries ||
      y.acc.retries - x.acc.retries ||
      (x.key < y.key ? -1 : x.key > y.key ? 1 : 0),
  );
  return {
    rulesVersion: RULES_VERSION,
    totals: {
      calls: new Set(calls.map((call) => call.key)).size,
      retries: total.retries,
      wastedRetries: total.wastedRetries,
      wastedMs: nsToMs(total.wastedNs),
      wastedTokens: total.wastedTokens,
      unrecoveredChains: total.unrecoveredChains,
    },
    groups: rows.map(({ key, acc, wastedMs }) => ({
      key,
      retries: acc.retries,
      wastedRetries: acc.wastedRetries,
      wastedMs,
      wastedTokens: acc.wastedTokens,
      unrecoveredChains: acc.unrecoveredChains,
      reasons: acc.reasons,
    })),
  };
}
