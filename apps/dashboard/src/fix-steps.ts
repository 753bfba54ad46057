import type { Fix } from '@errata/domain';

export const FIX_STEPS = ['suggested', 'delivered', 'acknowledged', 'verified'] as const;
export type FixStep = (typeof FIX_STEPS)[number];

export interface FixProgress {
  /** Each step of the lifecycle, done only when the fix records when it happened. */
  readonly steps: readonly { readonly step: FixStep; readonly at: string | null; readonly done: boolean }[];
  /** When the fix regressed, if it did; `reverified` when a later version was verified clean since. */
  readonly regression: { readonly at: string; readonly reverified: boolean } | null;
}

/**
 * Where a fix stands, step by step, from its own timestamps rather than from its state: a fix can be verified
 * without having been delivered or acknowledged (traffic proved it), and a regression clears the acknowledgement
 * but keeps the verification and the delivery on record.
 */
export function fixProgress(fix: Fix): FixProgress {
  const at: Record<FixStep, string | null> = {
    suggested: fix.suggestedAt,
    delivered: fix.deliveredAt,
    acknowledged: fix.acknowledgedAt,
    verified: fix.verifiedAt,
  };
  return {
    steps: FIX_STEPS.map((step) => ({ step, at: at[step], done: at[step] !== null })),
    regression:
      fix.regressedAt === null
        ? null
        : {
            at: fix.regressedAt,
            reverified: fix.verifiedAt !== null && Date.parse(fix.verifiedAt) > Date.parse(fix.regressedAt),
          },
  };
}
