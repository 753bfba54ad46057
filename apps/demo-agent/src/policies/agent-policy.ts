/**
 * A scripted agent policy: how the runtime reacts to each tool result — retry, correct the arguments, accept
 * the answer or hand off — in place of a model's decisions, so that every run of the demo makes the same calls.
 */
import type { EscalationTarget, SubagentReport } from '@errata/sdk';
import { callTool, type ToolCallRecord } from '../agent/tool-call';
import type { Interruption } from '../demo-interrupt';
import type { McpSession } from '../mcp/mcp-session';
import type { PolicyTally } from '../report/policy-tally';

export type PolicyName = 'naive' | 'contract-aware';

/** One thing the agent wants from a tool. */
export interface ToolStep {
  readonly session: McpSession;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  /** The arguments a model would write after reading a declared validation error; null when it cannot tell. */
  readonly correct?: (failure: ToolCallRecord) => Record<string, unknown> | null;
}

export interface StepOutcome {
  /** `empty`: the tool answered that there is nothing (or the agent read it so). */
  readonly status: 'answered' | 'empty' | 'failed';
  readonly attempts: readonly ToolCallRecord[];
}

export interface HandOff {
  readonly target: EscalationTarget;
  readonly reason: string;
}

/** The agent run a step belongs to. */
export interface RunContext {
  readonly inSubagent: boolean;
  readonly tally: PolicyTally;
  /**
   * Checked before every call: after Ctrl-C (which in a terminal stops the MCP servers too) the agent makes no
   * further call, so Errata records no transport errors the interruption caused.
   */
  readonly interruption: Interruption;
}

export interface AgentPolicy {
  readonly name: PolicyName;
  /** One line for the demo's output. */
  readonly summary: string;
  runStep(step: ToolStep, run: RunContext): Promise<StepOutcome>;
  /** Whom the agent hands off to once a step is over, if anyone. */
  handOff(step: ToolStep, outcome: StepOutcome, run: RunContext): HandOff | null;
  /** The coordinator's decision once its subagents have reported. */
  coordinatorHandOff(reports: readonly SubagentReport[]): HandOff | null;
}

/** A call made again after `of`; `hint` says whether the runtime tells Errata so (`withToolCall({ retryOf })`). */
export interface Retry {
  readonly of: ToolCallRecord;
  readonly hint: boolean;
}

/** Makes one call of the step and counts it. */
export function attempt(
  step: ToolStep,
  args: Record<string, unknown>,
  run: RunContext,
  retry?: Retry,
): Promise<ToolCallRecord> {
  const retryOf = retry?.hint === true ? retry.of.handle : undefined;
  return callTool(
    step.session,
    step.tool,
    args,
    retryOf,
    (call) => run.tally.recordCall(call.outcome, retry !== undefined),
    () => run.interruption.check(),
  );
}

export const lastAttempt = (outcome: StepOutcome): ToolCallRecord =>
  outcome.attempts[outcome.attempts.length - 1]!;

export const isFailure = (call: ToolCallRecord): boolean =>
  call.outcome !== 'ok' && call.outcome !== 'ok_empty';
