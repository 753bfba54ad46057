/**
 * `GET /reports/escalations` (DOMAIN.md §4, §8): escalations attributed to the failure that preceded them,
 * escalation rates overall and per category, and the avoidable ones. Pure and order-independent: the same
 * calls and escalations give the same report in any input order.
 *
 * Decisions where DOMAIN.md is silent (libs/domain/README.md):
 * - an escalation is attributed to the failed or misclassified call of its run that ended last at or before the
 *   escalation started, no longer than the retry window before it (ties: the later start, then span id);
 * - a misclassified call that is not a failure (failure-as-empty) counts under `unknown`;
 * - "never retried" looks at the call's retry links (a retry of it, or a transient call it retried), "never retried
 *   with changed arguments" at the retry chain the call belongs to.
 */
import { FAILED_OUTCOMES } from './events';
import {
  analyzeRetries,
  compareCalls,
  DEFAULT_RETRY_WINDOW_MS,
  endedBefore,
  type CallFact,
  type RetryAnalysis,
  type RetryCategory,
  type RetryChain,
} from './retries';
import {
  contributionsOf,
  sumContributions,
  sumRows,
  traceFactsOfCalls,
  type CallMeasure,
  type CallSums,
} from './report-contributions';
import { RULES_VERSION, type FailureCategory } from './rules';
import { deriveTraceFacts } from './trace-derivation';

/** A call as the escalation report reads it: its retry facts plus what the classification said. */
export interface EscalationCall extends CallFact {
  /** A hidden failure (failure-as-empty): misclassified, not failed. */
  readonly failureAsEmpty: boolean;
  /** The failure carried a customer-facing explanation. */
  readonly customerExplanation: boolean;
}

export interface EscalationFact {
  /** The escalation span's id. */
  readonly key: string;
  readonly traceId: string;
  readonly runId: string;
  readonly target: 'human' | 'user' | 'coordinator';
  readonly startNs: bigint;
}

export type AvoidableReason = 'explained_business' | 'unretried_transient' | 'uncorrected_validation';

export interface EscalationAttribution {
  readonly escalation: string;
  /** The attributed call's span id; null when unattributed. */
  readonly call: string | null;
  readonly category: FailureCategory | null;
  readonly avoidable: AvoidableReason | null;
}

export interface EscalationCategoryRow {
  readonly category: FailureCategory;
  /** Failed calls of this category. */
  readonly failures: number;
  /** Escalations attributed to calls of this category. */
  readonly escalations: number;
  readonly avoidable: number;
  /** escalations / failures; null without failures. */
  readonly rate: number | null;
}

export interface EscalationReport {
  readonly rulesVersion: number;
  readonly totals: {
    readonly failures: number;
    readonly escalations: number;
    readonly attributed: number;
    readonly unattributed: number;
    readonly avoidable: number;
    /** escalations / failures; null without failures. */
    readonly rate: number | null;
  };
  readonly byCategory: readonly EscalationCategoryRow[];
  readonly byTarget: Readonly<Record<EscalationFact['target'], number>>;
  readonly attributions: readonly EscalationAttribution[];
}

/** Report order of the categories. */
export const ESCALATION_CATEGORIES: readonly FailureCategory[] = [
  'transient',
  'validation',
  'business',
  'permission',
  'unknown',
  'empty',
];

const isFailed = (call: CallFact): boolean => FAILED_OUTCOMES.includes(call.outcome);

const categoryOf = (call: EscalationCall): FailureCategory =>
  isFailed(call) ? (call.category ?? 'unknown') : 'unknown';

const rate = (escalations: number, failures: number): number | null =>
  failures === 0 ? null : escalations / failures;

/** A trace's retry links both ways: each retry's retried call, and the calls something retried. */
interface RetryLinks {
  readonly retryOf: ReadonlyMap<string, string>;
  readonly retried: ReadonlySet<string>;
}

/**
 * Whether a transient failure was retried, read on the retry links up to the call: a call retries it, or it retries,
 * directly or not, a transient call (which it then retried). A chain that began with a validation failure and was
 * corrected into a transient one that nobody retried never retried the transient failure; nor did one whose chain
 * branched, another call retrying the validation failure while the transient one ran, and went on without it.
 */
function transientRetried(
  call: EscalationCall,
  retryLinks: RetryLinks,
  categoryOfKey: ReadonlyMap<string, RetryCategory | null>,
): boolean {
  if (retryLinks.retried.has(call.key)) return true;
  // Links point to earlier calls only: the walk ends.
  for (let key = retryLinks.retryOf.get(call.key); key !== undefined; key = retryLinks.retryOf.get(key)) {
    if (categoryOfKey.get(key) === 'transient') return true;
  }
  return false;
}

function avoidableReason(
  call: EscalationCall,
  chain: RetryChain | undefined,
  corrected: ReadonlySet<string>,
  retryLinks: RetryLinks,
  categoryOfKey: ReadonlyMap<string, RetryCategory | null>,
) {
  if (!isFailed(call)) return null;
  const category = categoryOf(call);
  if (category === 'business' && call.customerExplanation) return 'explained_business' as const;
  if (category === 'transient' && !transientRetried(call, retryLinks, categoryOfKey)) {
    return 'unretried_transient' as const;
  }
  if (category === 'validation' && (chain === undefined || !corrected.has(chain.key))) {
    return 'uncorrected_validation' as const;
  }
  return null;
}

export function escalationReport(
  calls: readonly EscalationCall[],
  escalations: readonly EscalationFact[],
  options: { readonly windowMs?: number } = {},
): EscalationReport {
  const facts = traceFactsOfCalls(calls, { escalations });
  const derivation = deriveTraceFacts(facts, options);
  const sums = sumContributions(contributionsOf(facts, derivation, () => ({ name: null, id: null })));
  return {
    ...escalationsFromSums(sums.calls),
    attributions: derivation.escalations.map(({ key, call, category, avoidable }) => ({
      escalation: key,
      call,
      category,
      avoidable,
    })),
  };
}

/** The call measures `escalationsFromSums` reads. */
export const ESCALATION_MEASURES: readonly CallMeasure[] = [
  'failures',
  'escalations',
  'attributed',
  'avoidable',
  'to_human',
  'to_user',
  'to_coordinator',
];

/** The report from summed contributions: failures by category, escalations by attributed category. */
export function escalationsFromSums(rows: readonly CallSums[]): Omit<EscalationReport, 'attributions'> {
  const totals = sumRows(rows);
  const byCategory = ESCALATION_CATEGORIES.map((category) => {
    const inCategory = sumRows(rows.filter((row) => row.category === category));
    const failures = Number(inCategory.failures);
    const escalated = Number(inCategory.escalations);
    return {
      category,
      failures,
      escalations: escalated,
      avoidable: Number(inCategory.avoidable),
      rate: rate(escalated, failures),
    };
  });
  const failures = Number(totals.failures);
  const escalated = Number(totals.escalations);
  const attributed = Number(totals.attributed);
  return {
    rulesVersion: RULES_VERSION,
    totals: {
      failures,
      escalations: escalated,
      attributed,
      unattributed: escalated - attributed,
      avoidable: Number(totals.avoidable),
      rate: rate(escalated, failures),
    },
    byCategory,
    byTarget: {
      human: Number(totals.to_human),
      user: Number(totals.to_user),
      coordinator: Number(totals.to_coordinator),
    },
  };
}

/**
 * Attributes every escalation to the failed or misclassified call of its run that ended last at or before it,
 * within the retry window, and says whether it was avoidable. `analysis` is `analyzeRetries` of the same calls with
 * the same options, when the caller has it already (it does not depend on the misclassification flags).
 */
export function attributeEscalations(
  calls: readonly EscalationCall[],
  escalations: readonly EscalationFact[],
  options: { readonly windowMs?: number } = {},
  analysis: RetryAnalysis = analyzeRetries(calls, options),
): EscalationAttribution[] {
  const windowNs = BigInt(Math.max(0, Math.round(options.windowMs ?? DEFAULT_RETRY_WINDOW_MS))) * 1_000_000n;
  const ordered = [...calls].sort(compareCalls);
  const { retries, chains } = analysis;
  const chainOf = new Map<string, RetryChain>();
  for (const chain of chains) for (const key of chain.calls) chainOf.set(key, chain);
  const corrected = new Set(
    retries.filter((link) => link.label === 'corrected').map((link) => link.chainKey),
  );
  const retryLinks: RetryLinks = {
    retryOf: new Map(retries.map((link) => [link.key, link.retryOf])),
    retried: new Set(retries.map((link) => link.retryOf)),
  };
  const categoryOfKey = new Map(ordered.map((call) => [call.key, call.category]));

  // Candidates per run: failed or misclassified calls, in order.
  const candidates = new Map<string, EscalationCall[]>();
  for (const call of ordered) {
    if (!isFailed(call) && !call.failureAsEmpty) continue;
    const list = candidates.get(call.runId) ?? [];
    list.push(call);
    candidates.set(call.runId, list);
  }

  const sortedEscalations = [...escalations].sort((a, b) =>
    a.startNs !== b.startNs ? (a.startNs < b.startNs ? -1 : 1) : a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
  );
  return sortedEscalations.map((escalation) => {
    let best: EscalationCall | null = null;
    for (const call of candidates.get(escalation.runId) ?? []) {
      if (!endedBefore(call, escalation) || escalation.startNs - call.endNs > windowNs) continue;
      if (
        best === null ||
        call.endNs > best.endNs ||
        (call.endNs === best.endNs && compareCalls(call, best) > 0)
      ) {
        best = call;
      }
    }
    return {
      escalation: escalation.key,
      call: best?.key ?? null,
      category: best === null ? null : categoryOf(best),
      avoidable:
        best === null
          ? null
          : avoidableReason(best, chainOf.get(best.key), corrected, retryLinks, categoryOfKey),
    };
  });
}
