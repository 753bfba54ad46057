/** Plays steps under a policy inside the active agent run, recording each hand-off as an escalation. */
import { recordEscalation } from '@errata/sdk';
import type { AgentPolicy, HandOff, RunContext, StepOutcome, ToolStep } from '../policies/agent-policy';

export interface PlayedStep {
  readonly step: ToolStep;
  readonly outcome: StepOutcome;
  readonly handOff: HandOff | null;
}

export function escalate(handOff: HandOff, run: RunContext): void {
  recordEscalation(handOff);
  run.tally.recordEscalation(handOff.target);
}

/**
 * Plays each task's steps in order. A task's steps depend on each other (look the order up, then refund it), so a
 * failure or a hand-off ends the task; the next task starts regardless.
 */
export async function playTasks(
  policy: AgentPolicy,
  tasks: readonly (readonly ToolStep[])[],
  run: RunContext,
): Promise<PlayedStep[]> {
  const played: PlayedStep[] = [];
  for (const task of tasks) {
    for (const step of task) {
      run.interruption.check();
      const outcome = await policy.runStep(step, run);
      const handOff = policy.handOff(step, outcome, run);
      played.push({ step, outcome, handOff });
      if (handOff !== null) escalate(handOff, run);
      if (handOff !== null || outcome.status === 'failed') break;
    }
  }
  return played;
}
