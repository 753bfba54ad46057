/**
 * Retries and retry waste (DOMAIN.md §2): which call retries which, the label of every retry, and chains.
 * Deterministic: calls are ordered by start time, then span id, whatever the input order.
 */
import type { Outcome, ToolCallData } from './events';
import type { Classification } from './classify';
import type { FailureCategory } from './rules';

export type RetryLabel =
  | 'non_retryable'
  | 'blind_retry'
  | 'corrected'
  | 'recovery'
  | 'ignored_retry_after'
  | 'guess'
  | 'misclassified_empty'
  | 'repeated_empty'
  | 'refined';

/** Every label, in the order of the DOMAIN.md §2 table (reports list reasons in this order). */
export const RETRY_LABELS: readonly RetryLabel[] = [
  'non_retryable',
  'blind_retry',
  'corrected',
  'recovery',
  'ignored_retry_after',
  'guess',
  'misclassified_empty',
  'repeated_empty',
  'refined',
];

/** The category a retry is grouped under: the retried call's category, `empty` for ok_empty and empty-as-error. */
export type RetryCategory = FailureCategory;

export const DEFAULT_RETRY_WINDOW_MS = 600_000;

/** What retry analysis needs to know about one call. */
export interface CallFact {
  /** The span id. */
  readonly key: string;
  readonly traceId: string;
  readonly runId: string;
  readonly server: string | null;
  readonly tool: string;
  readonly outcome: Outcome;
  /** Failed calls: their category (`empty` for empty-as-error); ok_empty: `empty`; ok: null. */
  readonly category: RetryCategory | null;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly argsHash: string | null;
  /** Explicit `errata.retry.of`: the span id of the call this one retries. */
  readonly retryOf: string | null;
  /** Retry-after the call declared, in ms. */
  readonly retryAfterMs: number | null;
  readonly tokens: number | null;
}

export interface RetryLink {
  /** The retry (B). */
  readonly key: string;
  /** The call it retries (A). */
  readonly retryOf: string;
  readonly via: 'hint' | 'inferred';
  readonly label: RetryLabel;
  readonly wasted: boolean;
  /** Equal non-null args hashes; null when either hash is unknown. */
  readonly sameArgs: boolean | null;
  /** A's category (`unknown` when A failed without one, `empty` for ok_empty). */
  readonly retriedCategory: RetryCategory;
  /** A's server and tool. */
  readonly server: string | null;
  readonly tool: string;
  /** The key of the chain's first call. */
  readonly chainKey: string;
  /** B's own duration (0 when its end precedes its start). */
  readonly durationNs: bigint;
  readonly tokens: number | null;
}

export interface RetryChain {
  /** The first call's key. */
  readonly key: string;
  /** Every call of the chain, in order. */
  readonly calls: readonly string[];
  /** The first call's category, server and tool. */
  readonly category: RetryCategory;
  readonly server: string | null;
  readonly tool: string;
  readonly lastOutcome: Outcome;
  /** The last call is ok or ok_empty. */
  readonly recovered: boolean;
}

export interface RetryAnalysis {
  readonly retries: readonly RetryLink[];
  readonly chains: readonly RetryChain[];
}

export interface RetryOptions {
  /** Retry window in ms (B must start within it after A ended). Default 10 minutes. */
  readonly windowMs?: number;
}

export const isOkOrEmpty = (outcome: Outcome): boolean => outcome === 'ok' || outcome === 'ok_empty';

/** Start time, then span id, then end time and outcome (only duplicated keys reach those). */
export function compareCalls(a: CallFact, b: CallFact): number {
  if (a.startNs !== b.startNs) return a.startNs < b.startNs ? -1 : 1;
  if (a.key !== b.key) return a.key < b.key ? -1 : 1;
  if (a.endNs !== b.endNs) return a.endNs < b.endNs ? -1 : 1;
  return a.outcome < b.outcome ? -1 : a.outcome > b.outcome ? 1 : 0;
}

/** The category a retry of `call` is grouped under. */
export function retriedCategory(call: CallFact): RetryCategory {
  return call.outcome === 'ok_empty' ? 'empty' : (call.category ?? 'unknown');
}

/**
 * Links every call to the call it retries, labels every retry and builds chains.
 *
 * Linking: a call with `retryOf` is linked by the hint alone — honoured when it names another call of the
 * set that is not `ok` and comes earlier in order; otherwise the call is no retry (inference is not used
 * against an explicit hint). Without a hint, B retries the most recent A with: same run, same server (null
 * equals null) and tool, A not `ok`, A ended at or before B started (`endedBefore`: less than 1 ms after a start
 * cut to the millisecond), B started at most `windowMs` after A ended, and no `ok` call of that run/server/tool
 * started between A and B.
 */
export function analyzeRetries(calls: readonly CallFact[], options: RetryOptions = {}): RetryAnalysis {
  const windowNs = BigInt(Math.max(0, Math.round(options.windowMs ?? DEFAULT_RETRY_WINDOW_MS))) * 1_000_000n;
  const ordered = dedupe([...calls].sort(compareCalls));
  const position = new Map<string, number>();
  for (let i = 0; i < ordered.length; i++) position.set(ordered[i]!.key, i);

  const retryOf = new Array<number | null>(ordered.length).fill(null);
  const via = new Array<'hint' | 'inferred'>(ordered.length).fill('inferred');
  const groups = new CallGroups();
  ordered.forEach((call, i) => {
    if (call.retryOf !== null) {
      const target = position.get(call.retryOf);
      if (target !== undefined && target < i && ordered[target]?.outcome !== 'ok') {
        retryOf[i] = target;
        via[i] = 'hint';
      }
    }
    // A hinted call joins its group all the same: it can be retried, and when ok it ends inference.
    const group = groups.of(call);
    if (call.retryOf === null) retryOf[i] = inferPrevious(ordered, group, call, windowNs);
    group.indexes.push(i);
    const duration = call.endNs - call.startNs;
    if (duration > group.maxDurationNs) group.maxDurationNs = duration;
  });

  // Chains: roots are calls that retry nothing and are retried at least once.
  const root = new Array<number>(ordered.length);
  const members = new Map<number, number[]>();
  ordered.forEach((_call, i) => {
    const parent = retryOf[i] ?? null;
    const r = parent === null ? i : (root[parent] ?? parent);
    root[i] = r;
    if (parent !== null) {
      let list = members.get(r);
      if (list === undefined) members.set(r, (list = [r]));
      list.push(i);
    }
  });
  // A guess is wasted when its chain never reaches ok / ok_empty from that retry on (DOMAIN.md §2), even if it
  // fails again after: per call, whether it or a later call of its chain is ok / ok_empty.
  const reachesOk = new Map<number, boolean>();
  const chains: RetryChain[] = [];
  for (const [r, list] of [...members].sort(([a], [b]) => a - b)) {
    const first = ordered[r]!;
    const last = ordered[list[list.length - 1]!]!;
    let later = false;
    for (const i of [...list].reverse()) {
      later ||= isOkOrEmpty(ordered[i]!.outcome);
      reachesOk.set(i, later);
    }
    chains.push({
      key: first.key,
      calls: list.map((i) => ordered[i]!.key),
      category: retriedCategory(first),
      server: first.server,
      tool: first.tool,
      lastOutcome: last.outcome,
      recovered: isOkOrEmpty(last.outcome),
    });
  }

  const retries: RetryLink[] = [];
  ordered.forEach((b, i) => {
    const parent = retryOf[i] ?? null;
    if (parent === null) return;
    const a = ordered[parent]!;
    const chainRoot = root[i]!;
    const sameArgs = a.argsHash !== null && b.argsHash !== null ? a.argsHash === b.argsHash : null;
    const { label, wasted } = labelRetry(a, b, sameArgs, reachesOk.get(i) ?? false);
    retries.push({
      key: b.key,
      retryOf: a.key,
      via: via[i]!,
      label,
      wasted,
      sameArgs,
      retriedCategory: retriedCategory(a),
      server: a.server,
      tool: a.tool,
      chainKey: ordered[chainRoot]!.key,
      durationNs: b.endNs > b.startNs ? b.endNs - b.startNs : 0n,
      tokens: b.tokens,
    });
  });
  return { retries, chains };
}

/** Keeps the first of calls sharing a key (span ids are unique; a duplicate is a re-sent span). */
function dedupe(ordered: CallFact[]): CallFact[] {
  const seen = new Set<string>();
  return ordered.filter((call) => !seen.has(call.key) && (seen.add(call.key), true));
}

interface CallGroup {
  /** Indexes into the ordered calls of one run, server and tool. */
  readonly indexes: number[];
  maxDurationNs: bigint;
}

/**
 * The groups of calls by run, server (null its own value) and tool. Nested maps, not one map keyed by a string built
 * from the three: a long trace is derived again at every batch, and building and hashing that string for every call
 * was the derivation's largest cost.
 */
class CallGroups {
  private readonly byRun = new Map<string, Map<string | null, Map<string, CallGroup>>>();

  of(call: CallFact): CallGroup {
    let byServer = this.byRun.get(call.runId);
    if (byServer === undefined) this.byRun.set(call.runId, (byServer = new Map()));
    let byTool = byServer.get(call.server);
    if (byTool === undefined) byServer.set(call.server, (byTool = new Map()));
    let group = byTool.get(call.tool);
    if (group === undefined) byTool.set(call.tool, (group = { indexes: [], maxDurationNs: 0n }));
    return group;
  }
}

/** The most recent qualifying A for B in B's group (calls before B in order), or null. */
function inferPrevious(
  ordered: readonly CallFact[],
  group: CallGroup,
  b: CallFact,
  windowNs: bigint,
): number | null {
  for (let g = group.indexes.length - 1; g >= 0; g--) {
    const index = group.indexes[g]!;
    const a = ordered[index]!;
    if (a.outcome === 'ok') return null; // an ok call in between: B is a new call, not a retry
    // Every call from here back ended more than a window before B: none can qualify.
    if (b.startNs - a.startNs > windowNs + group.maxDurationNs) return null;
    if (endedBefore(a, b) && b.startNs - a.endNs <= windowNs) return index;
  }
  return null;
}

const NS_PER_MS = 1_000_000n;

/**
 * A ended before B started (B a retry, or an escalation: `attributeEscalations`). OpenTelemetry JS stamps a span's
 * start with `Date.now()`, whole milliseconds, and its end with that start plus a sub-millisecond duration: an
 * immediate retry or escalation after a fast failure can then start, as stamped, up to 1 ms before the failure ended.
 * So a start that is a whole millisecond, maybe cut, may precede A's end by less than 1 ms; but only when it is a later
 * millisecond than A's start: two starts cut to the same millisecond tell nothing of which came first.
 */
export function endedBefore(
  a: { readonly startNs: bigint; readonly endNs: bigint },
  b: { readonly startNs: bigint },
): boolean {
  if (a.endNs <= b.startNs) return true;
  return b.startNs % NS_PER_MS === 0n && a.startNs < b.startNs && a.endNs - b.startNs < NS_PER_MS;
}

/**
 * The label of retry B of A (DOMAIN.md §2 table). Unknown args (a null hash on either side) count as changed
 * arguments: waste is only claimed on evidence.
 */
export function labelRetry(
  a: CallFact,
  b: CallFact,
  sameArgs: boolean | null,
  chainReachesOk: boolean,
): { label: RetryLabel; wasted: boolean } {
  const same = sameArgs === true;
  if (a.outcome === 'ok_empty')
    return same ? { label: 'repeated_empty', wasted: true } : { label: 'refined', wasted: false };
  switch (a.category ?? 'unknown') {
    case 'empty':
      return { label: 'misclassified_empty', wasted: true };
    case 'business':
    case 'permission':
      return { label: 'non_retryable', wasted: true };
    case 'validation':
      return same ? { label: 'blind_retry', wasted: true } : { label: 'corrected', wasted: false };
    case 'transient': {
      const early =
        a.retryAfterMs !== null && b.startNs - a.endNs < BigInt(Math.round(a.retryAfterMs)) * 1_000_000n;
      return early ? { label: 'ignored_retry_after', wasted: true } : { label: 'recovery', wasted: false };
    }
    case 'unknown':
      return { label: 'guess', wasted: !chainReachesOk };
  }
}

/**
 * The retry facts of one classified call. `server` is the server's name, else `address[:port]`, else null.
 */
export function toCallFact(call: ToolCallData, classification: Classification, runId: string): CallFact {
  return {
    key: call.span.spanId,
    traceId: call.span.traceId,
    runId,
    server: serverLabel(call.server),
    tool: call.tool,
    outcome: call.outcome,
    category: classification.failed
      ? (classification.category ?? 'unknown')
      : call.outcome === 'ok_empty'
        ? 'empty'
        : null,
    startNs: BigInt(call.span.startTimeUnixNano),
    endNs: BigInt(call.span.endTimeUnixNano),
    argsHash: call.args.hash,
    retryOf: call.retryHint.of,
    retryAfterMs: classification.retryAfterMs,
    tokens: call.tokens,
  };
}

/** How a server is named in reports: its serverInfo name, else `address[:port]`, else null. */
export function serverLabel(server: ToolCallData['server']): string | null {
  if (server.name !== null) return server.name;
  if (server.address === null) return null;
  return server.port === null ? server.address : `${server.address}:${server.port}`;
}
