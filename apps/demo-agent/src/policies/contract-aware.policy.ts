/**
 * The contract-aware policy: the seeds' recovery per category, read from the result's declared contract.
 * - transient: retry after the declared `retryAfterMs` (honoured exactly: the demo's servers declare small
 *   delays), at most twice, unless `isRetryable` is false;
 * - validation: correct the arguments once, as the model would from the error's description;
 * - business / permission: never retry; hand off at once — with the customer explanation to the user, or to a
 *   human when the tool says the case needs one;
 * - `not_found` from a search, or a valid empty list: an answer, not a failure;
 * - nothing declared: one guess after a short pause, then tell the user honestly.
 * Every retry names the call it retries (`withToolCall({ retryOf })`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ToolCallRecord } from '../agent/tool-call';
import {
  attempt,
  isFailure,
  lastAttempt,
  type AgentPolicy,
  type StepOutcome,
  type ToolStep,
} from './agent-policy';

const MAX_TRANSIENT_RETRIES = 2;
const MAX_CORRECTIONS = 1;
const MAX_GUESSES = 1;
/** Timers can fire a millisecond early; a retry before the declared delay is a wasted one. */
const RETRY_AFTER_MARGIN_MS = 10;
const BACKOFF_WITHOUT_RETRY_AFTER_MS = 100;
const GUESS_PAUSE_MS = 50;

type Move =
  | { readonly retry: false; readonly status: StepOutcome['status'] }
  | { readonly retry: true; readonly args: Record<string, unknown>; readonly delayMs: number };

interface Budget {
  transient: number;
  corrections: number;
  guesses: number;
}

const stop = (status: StepOutcome['status']): Move => ({ retry: false, status });

function decide(step: ToolStep, call: ToolCallRecord, budget: Budget): Move {
  const { category, retryable, retryAfterMs } = call.declared;
  switch (category) {
    case 'transient':
      if (retryable === false || budget.transient >= MAX_TRANSIENT_RETRIES) return stop('failed');
      budget.transient++;
      return {
        retry: true,
        args: call.args,
        delayMs: (retryAfterMs ?? BACKOFF_WITHOUT_RETRY_AFTER_MS) + RETRY_AFTER_MARGIN_MS,
      };
    case 'validation': {
      const corrected = budget.corrections < MAX_CORRECTIONS ? (step.correct?.(call) ?? null) : null;
      if (corrected === null) return stop('failed');
      budget.corrections++;
      return { retry: true, args: corrected, delayMs: 0 };
    }
    case 'not_found':
      return stop('empty');
    case 'business':
    case 'permission':
      return stop('failed');
    case null:
      if (retryable === false || budget.guesses >= MAX_GUESSES) return stop('failed');
      budget.guesses++;
      return { retry: true, args: call.args, delayMs: GUESS_PAUSE_MS };
  }
}

export const contractAwarePolicy: AgentPolicy = {
  name: 'contract-aware',
  summary:
    'follows each error contract: waits out transient errors, corrects arguments, never retries a declared business or permission error, guesses once where nothing is declared',

  async runStep(step, run): Promise<StepOutcome> {
    const budget: Budget = { transient: 0, corrections: 0, guesses: 0 };
    const attempts = [await attempt(step, step.args, run)];
    for (;;) {
      const call = attempts[attempts.length - 1]!;
      if (!isFailure(call)) return { status: call.outcome === 'ok_empty' ? 'empty' : 'answered', attempts };
      const move = decide(step, call, budget);
      if (!move.retry) return { status: move.status, attempts };
      if (move.delayMs > 0) await sleep(move.delayMs);
      attempts.push(await attempt(step, move.args, run, { of: call, hint: true }));
    }
  },

  handOff(step, outcome, run) {
    if (outcome.status !== 'failed') return null;
    const last = lastAttempt(outcome);
    const { category, description, customerExplanation, suggestedNextAction } = last.declared;
    const explanation = description ?? last.text;
    switch (category) {
      case 'business':
        // The customer hears the rule and the options; a human is needed only where the tool says so.
        return {
          target: suggestedNextAction?.startsWith('escalate') === true ? 'human' : 'user',
          reason: customerExplanation ?? explanation,
        };
      case 'permission':
        return { target: run.inSubagent ? 'coordinator' : 'human', reason: explanation };
      case 'transient':
        // A subagent reports what it could not recover in its hand-back; a front-line agent tells the user.
        return run.inSubagent
          ? null
          : { target: 'user', reason: `${step.tool} is unavailable for now: ${explanation}` };
      default:
        return {
          target: run.inSubagent ? 'coordinator' : 'user',
          reason: `${step.tool} did not work: ${explanation}`,
        };
    }
  },

  // Partial results with their alternatives are enough to go on: the coordinator flags reduced coverage itself.
  coordinatorHandOff: () => null,
};
