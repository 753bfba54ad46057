/**
 * The naive policy: a single global retry rule, the one the seeds warn against. Any failure — and any answer
 * that looks empty — is retried at once with the same arguments; only when the retries are used up does the
 * agent hand off: to a human, or from a subagent to its coordinator. It sends no retry hints, so Errata has to
 * infer its retries.
 */
import { attempt, isFailure, lastAttempt, type AgentPolicy, type StepOutcome } from './agent-policy';
import type { ToolCallRecord } from '../agent/tool-call';

const NAIVE_MAX_RETRIES = 2;

const unhelpful = (call: ToolCallRecord): boolean => isFailure(call) || call.outcome === 'ok_empty';

export const naivePolicy: AgentPolicy = {
  name: 'naive',
  summary: `retries every failure and every empty answer ${NAIVE_MAX_RETRIES} times at once, then escalates`,

  async runStep(step, run): Promise<StepOutcome> {
    const attempts: ToolCallRecord[] = [];
    let call = await attempt(step, step.args, run);
    attempts.push(call);
    while (unhelpful(call) && attempts.length <= NAIVE_MAX_RETRIES) {
      // No hint: a runtime that retries blindly rarely says which call it retries.
      call = await attempt(step, step.args, run, { of: call, hint: false });
      attempts.push(call);
    }
    const status = !unhelpful(call) ? 'answered' : isFailure(call) ? 'failed' : 'empty';
    return { status, attempts };
  },

  handOff(step, outcome, run) {
    if (outcome.status === 'answered') return null;
    const last = lastAttempt(outcome);
    return {
      target: run.inSubagent ? 'coordinator' : 'human',
      reason: `${step.tool} still failing after ${outcome.attempts.length} attempts: ${last.text}`,
    };
  },

  coordinatorHandOff(reports) {
    const incomplete = reports.filter((report) => report.status !== 'complete').length;
    return incomplete === 0
      ? null
      : {
          target: 'human',
          reason: `research incomplete: ${incomplete} of ${reports.length} subagents did not finish`,
        };
  },
};
