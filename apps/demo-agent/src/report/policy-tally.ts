/** What one policy did, counted by the runtime itself: calls by outcome, retries, hand-offs, subagent reports. */
import type { EscalationTarget, SubagentStatus } from '@errata/sdk';
import { OUTCOMES, type Outcome } from '../agent/tool-call';

export interface TallyCounts {
  readonly calls: number;
  readonly outcomes: Readonly<Record<Outcome, number>>;
  /** Calls made again after a failed or unhelpful call of the same step. */
  readonly retries: number;
  readonly escalations: Readonly<Record<EscalationTarget, number>>;
  readonly reports: Readonly<Record<SubagentStatus, number>>;
}

const zeros = <K extends string>(keys: readonly K[]): Record<K, number> =>
  Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;

export const ESCALATION_TARGETS: readonly EscalationTarget[] = ['human', 'user', 'coordinator'];
export const SUBAGENT_STATUSES: readonly SubagentStatus[] = ['complete', 'partial', 'failed'];

export class PolicyTally {
  private calls = 0;
  private retries = 0;
  private readonly outcomes = zeros(OUTCOMES);
  private readonly escalations = zeros(ESCALATION_TARGETS);
  private readonly reports = zeros(SUBAGENT_STATUSES);

  recordCall(outcome: Outcome, isRetry: boolean): void {
    this.calls++;
    this.outcomes[outcome]++;
    if (isRetry) this.retries++;
  }

  recordEscalation(target: EscalationTarget): void {
    this.escalations[target]++;
  }

  recordReport(status: SubagentStatus): void {
    this.reports[status]++;
  }

  counts(): TallyCounts {
    return {
      calls: this.calls,
      outcomes: { ...this.outcomes },
      retries: this.retries,
      escalations: { ...this.escalations },
      reports: { ...this.reports },
    };
  }
}

const sum = (record: Readonly<Record<string, number>>): number =>
  Object.values(record).reduce((a, b) => a + b, 0);

export const failedCalls = (counts: TallyCounts): number =>
  counts.calls - counts.outcomes.ok - counts.outcomes.ok_empty;
export const escalationCount = (counts: TallyCounts): number => sum(counts.escalations);
export const subagentReportCount = (counts: TallyCounts): number => sum(counts.reports);
/** `after − before`, for what one agent run or episode did. */
export function difference(after: TallyCounts, before: TallyCounts): TallyCounts {
  const minus = <K extends string>(a: Readonly<Record<K, number>>, b: Readonly<Record<K, number>>) =>
    Object.fromEntries(Object.keys(a).map((key) => [key, a[key as K] - b[key as K]])) as Record<K, number>;
  return {
    calls: after.calls - before.calls,
    outcomes: minus(after.outcomes, before.outcomes),
    retries: after.retries - before.retries,
    escalations: minus(after.escalations, before.escalations),
    reports: minus(after.reports, before.reports),
  };
}
