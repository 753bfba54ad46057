/**
 * `GET /reports/retry-waste` (DOMAIN.md §2, §8). The same set of calls gives byte-identical JSON in any input
 * order: calls are ordered before analysis, sums are exact (bigint ns) before one rounding, and groups and
 * reasons come out in a fixed order.
 */
import {
  contributionsInMemory,
  sumContributions,
  sumRows,
  traceFactsOfCalls,
  type CallContribution,
  type CallMeasure,
  type CallSums,
  type Measures,
} from './report-contributions';
import { isoFromNs } from './report-order';
import { RETRY_LABELS, type CallFact, type RetryLabel } from './retries';
import { RULES_VERSION } from './rules';
import { UNKNOWN_SERVER } from './server-label';

export type RetryWasteGroupBy = 'category' | 'server' | 'tool';

export interface RetryWasteTotals {
  readonly calls: number;
  readonly retries: number;
  readonly wastedRetries: number;
  readonly wastedMs: number;
  readonly wastedTokens: number;
  readonly unrecoveredChains: number;
}

export interface RetryWasteGroup {
  /** The group's label: its category, server, or `server/tool`. */
  readonly key: string;
  /** Grouped by server or tool: the retried calls' server, null when it did not say its name. */
  readonly server?: string | null;
  /** Grouped by tool: the retried calls' tool, to drill down with the `server` and `tool` filters. */
  readonly tool?: string | null;
  readonly retries: number;
  readonly wastedRetries: number;
  readonly wastedMs: number;
  readonly wastedTokens: number;
  readonly unrecoveredChains: number;
  /** Retries per label, every label present (zeros included), in RETRY_LABELS order. */
  readonly reasons: Readonly<Record<RetryLabel, number>>;
  /** The group's latest wasted retries in the window (RETRY_WASTE_SAMPLES at most), newest first. */
  readonly samples: readonly RetryWasteSample[];
}

/** A wasted retry a group shows, to open its run timeline on. */
export interface RetryWasteSample {
  readonly traceId: string;
  /** The retry's span id. */
  readonly spanId: string;
  readonly startTime: string;
  /** Its retry label: why it was wasted. */
  readonly reason: RetryLabel;
  readonly agentName: string | null;
  readonly agentId: string | null;
}

/** Wasted retries shown per group. */
export const RETRY_WASTE_SAMPLES = 3;

/** A wasted retry as it was stored: its place, and the dimensions its contribution has (those of the call retried). */
export interface WastedRetry {
  readonly traceId: string;
  readonly key: string;
  readonly startNs: bigint;
  readonly agentName: string | null;
  readonly agentId: string | null;
  readonly category: string | null;
  readonly server: string | null;
  readonly tool: string | null;
  /** Its contribution's measures: the retry label is the one present. */
  readonly measures: Measures<CallMeasure>;
}

/** The dimensions of a retry-waste group: those of the calls retried that its key is made of (the others null). */
export interface RetryWasteGroupDimensions {
  readonly category: string | null;
  readonly server: string | null;
  readonly tool: string | null;
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

type GroupOf = Pick<RetryWasteGroup, 'key' | 'server' | 'tool'>;

/** A group's key, with its server (and tool) where it is grouped by them. */
function groupOf(row: RetryWasteGroupDimensions, groupBy: RetryWasteGroupBy): GroupOf {
  const label = row.server ?? UNKNOWN_SERVER;
  switch (groupBy) {
    case 'category':
      return { key: row.category ?? 'unknown' };
    case 'server':
      return { key: label, server: row.server };
    case 'tool':
      return { key: `${label}/${row.tool}`, server: row.server, tool: row.tool };
  }
}

const byText = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);

/** Tells groups apart: their keys can read alike (names with `/`, a server named `(unknown)`). */
const identityOf = (of: GroupOf): string => JSON.stringify([of.key, of.server, of.tool]);

/** The dimensions `groupBy` keys groups by, of a row or a wasted retry (the others null). */
function dimensionsOf(row: RetryWasteGroupDimensions, groupBy: RetryWasteGroupBy): RetryWasteGroupDimensions {
  return {
    category: groupBy === 'category' ? row.category : null,
    server: groupBy === 'category' ? null : row.server,
    tool: groupBy === 'tool' ? row.tool : null,
  };
}

/** The groups of these rows that have wasted retries, by the dimensions to look up their samples with. */
export function wastedRetryGroups(
  rows: readonly CallSums[],
  groupBy: RetryWasteGroupBy,
): RetryWasteGroupDimensions[] {
  const groups = new Map<string, RetryWasteGroupDimensions>();
  for (const row of rows) {
    if (row.sums.wasted_retries === 0n) continue;
    const dimensions = dimensionsOf(row, groupBy);
    groups.set(JSON.stringify([dimensions.category, dimensions.server, dimensions.tool]), dimensions);
  }
  return [...groups.values()];
}

/** The retry label of a retry's contribution (each has exactly one). */
const reasonOf = (measures: WastedRetry['measures']): RetryLabel | undefined =>
  RETRY_LABELS.find((label) => (measures[label] ?? 0) > 0);

/**
 * Samples per group (identified as the report identifies it) from wasted retries: each group's latest
 * RETRY_WASTE_SAMPLES, newest first (start, then span id and trace id, descending: the same in any input order).
 */
export function retryWasteSamples(
  retries: readonly WastedRetry[],
  groupBy: RetryWasteGroupBy,
): (group: GroupOf) => readonly RetryWasteSample[] {
  const newestFirst = [...retries].sort(
    (x, y) =>
      (x.startNs < y.startNs ? 1 : x.startNs > y.startNs ? -1 : 0) ||
      byText(y.key, x.key) ||
      byText(y.traceId, x.traceId),
  );
  const byGroup = new Map<string, RetryWasteSample[]>();
  for (const retry of newestFirst) {
    const identity = identityOf(groupOf(retry, groupBy));
    const samples = byGroup.get(identity) ?? [];
    const reason = reasonOf(retry.measures);
    if (samples.length === RETRY_WASTE_SAMPLES || reason === undefined) continue;
    samples.push({
      traceId: retry.traceId,
      spanId: retry.key,
      startTime: isoFromNs(retry.startNs),
      reason,
      agentName: retry.agentName,
      agentId: retry.agentId,
    });
    byGroup.set(identity, samples);
  }
  return (group) => byGroup.get(identityOf(group)) ?? [];
}

/** The wasted retries among call contributions. */
export const wastedRetriesOf = (calls: readonly CallContribution[]): WastedRetry[] =>
  calls.filter((c) => c.role === 'retry' && (c.measures.wasted_retries ?? 0) > 0);

/** Nanoseconds → whole milliseconds, half up. */
export const nsToMs = (ns: bigint): number => Number((ns + 500_000n) / 1_000_000n);

/**
 * Group keys: `category` — the retried call's category (transient, validation, business, permission, unknown,
 * empty); `server` — the retried call's server, `(unknown)` when null; `tool` — `server/tool` of the retried
 * call (tool names are only unique per server). Groups by server or tool also carry `server` (and `tool`), as a
 * key cannot be split back where names contain `/`; two pairs whose keys read alike stay two groups.
 * Chains count under their first call's key.
 * Groups sort by wastedMs desc, then wastedRetries desc, retries desc, key asc (then server, tool).
 */
export function retryWasteReport(calls: readonly CallFact[], options: RetryWasteOptions): RetryWasteReport {
  const contributions = contributionsInMemory(traceFactsOfCalls(calls), options);
  return retryWasteFromSums(
    sumContributions(contributions).calls,
    options.groupBy,
    retryWasteSamples(wastedRetriesOf(contributions.calls), options.groupBy),
  );
}

/** The call measures `retryWasteFromSums` reads. */
export const RETRY_WASTE_MEASURES: readonly CallMeasure[] = [
  'calls',
  'retries',
  'wasted_retries',
  'wasted_ns',
  'wasted_tokens',
  'unrecovered_chains',
  ...RETRY_LABELS,
];

/**
 * The report from summed contributions: retries and unrecovered chains under their group key, with each group's
 * samples from `samplesOf` (`retryWasteSamples`). The totals are those of `totalRows`: every row, when `rows` are
 * one page of the groups.
 */
export function retryWasteFromSums(
  rows: readonly CallSums[],
  groupBy: RetryWasteGroupBy,
  samplesOf: (group: GroupOf) => readonly RetryWasteSample[],
  totalRows: readonly CallSums[] = rows,
): RetryWasteReport {
  const totals = sumRows(totalRows);
  const groups = new Map<string, { readonly of: GroupOf; rows: CallSums[] }>();
  for (const row of rows) {
    if (row.sums.retries === 0n && row.sums.unrecovered_chains === 0n) continue;
    const of = groupOf(row, groupBy);
    const identity = identityOf(of);
    const group = groups.get(identity) ?? { of, rows: [] };
    group.rows.push(row);
    groups.set(identity, group);
  }
  const shaped = [...groups.values()].map(({ of, rows: list }) => {
    const sums = sumRows(list);
    return {
      ...of,
      retries: Number(sums.retries),
      wastedRetries: Number(sums.wasted_retries),
      wastedMs: nsToMs(sums.wasted_ns),
      wastedTokens: Number(sums.wasted_tokens),
      unrecoveredChains: Number(sums.unrecovered_chains),
      reasons: Object.fromEntries(RETRY_LABELS.map((label) => [label, Number(sums[label])])) as Record<
        RetryLabel,
        number
      >,
      samples: samplesOf(of),
    };
  });
  shaped.sort(
    (x, y) =>
      y.wastedMs - x.wastedMs ||
      y.wastedRetries - x.wastedRetries ||
      y.retries - x.retries ||
      byText(x.key, y.key) ||
      byText(x.server ?? '', y.server ?? '') ||
      (x.server === null ? 0 : 1) - (y.server === null ? 0 : 1) ||
      byText(x.tool ?? '', y.tool ?? ''),
  );
  return {
    rulesVersion: RULES_VERSION,
    totals: {
      calls: Number(totals.calls),
      retries: Number(totals.retries),
      wastedRetries: Number(totals.wasted_retries),
      wastedMs: nsToMs(totals.wasted_ns),
      wastedTokens: Number(totals.wasted_tokens),
      unrecoveredChains: Number(totals.unrecovered_chains),
    },
    groups: shaped,
  };
}
