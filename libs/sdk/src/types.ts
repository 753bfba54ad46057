import type { Span } from '@opentelemetry/api';
import type { InstrumentationConfig } from '@opentelemetry/instrumentation';

/** What a `responseHook` sees of a finished `tools/call`. */
export interface ToolCallInfo {
  readonly toolName: string;
  /** The result, when the call returned one (read it, do not change it). */
  readonly result?: unknown;
  /** The error, when the call threw. */
  readonly error?: unknown;
}

export interface ToolCallCaptureConfig {
  /**
   * Send the text and structured content of every result. Off by default: only errors, empty results and
   * results that signal a failure send their (redacted, truncated) text.
   */
  captureResults?: boolean | undefined;
  /** Send the arguments, redacted and truncated, as `gen_ai.tool.call.arguments`. Off: only their hash and size. */
  captureArguments?: boolean | undefined;
  /** UTF-8 byte limit of every text sent. Default 2048. */
  textLimitBytes?: number | undefined;
  /** Called before each tool-call span ends; what it throws, or its promise rejects with, goes to `diag`, never to the host. */
  responseHook?: ((span: Span, info: ToolCallInfo) => void) | undefined;
}

export interface McpClientInstrumentationConfig extends InstrumentationConfig, ToolCallCaptureConfig {}

/** Roles of DOMAIN.md §5. */
export type AgentRole = 'coordinator' | 'subagent';

export interface AgentRunOptions {
  /** `gen_ai.agent.name`; the span is named `invoke_agent {name}`. */
  readonly name: string;
  /** `gen_ai.agent.id`. */
  readonly id?: string | undefined;
  /** `errata.agent.role`. Default: `subagent` inside another agent run, otherwise not set. */
  readonly role?: AgentRole | undefined;
  /** `gen_ai.conversation.id`. Default: the enclosing run's. */
  readonly conversationId?: string | undefined;
}

/** The agent run a callback runs in. */
export interface AgentRun {
  readonly traceId: string;
  readonly spanId: string;
  readonly name: string;
}

export type EscalationTarget = 'human' | 'user' | 'coordinator';

export interface Escalation {
  readonly target: EscalationTarget;
  /** Why the agent hands off; sent redacted and truncated. */
  readonly reason?: string | undefined;
}

export type SubagentStatus = 'complete' | 'partial' | 'failed';

/** A subagent's hand-back to its coordinator (DOMAIN.md §4). */
export interface SubagentReport {
  readonly status: SubagentStatus;
  readonly completed?: number | undefined;
  readonly total?: number | undefined;
  /** What the subagent tried. */
  readonly attempted?: readonly string[] | undefined;
  /** What the coordinator could do instead. */
  readonly alternatives?: readonly string[] | undefined;
  /** How many partial results came back, or the results themselves (sent as redacted JSON). */
  readonly partialResults?: number | unknown;
  /** The category of the failure, when it failed. */
  readonly errorCategory?: string | undefined;
  readonly retryable?: boolean | undefined;
}

/**
 * Hints for the tool calls a callback makes: the runtime knows this call retries an earlier one, or has the
 * model's tool-call id.
 */
export interface ToolCallHints {
  /**
   * The earlier call: its span id, or the result it returned / the error it threw (a `catch` variable as it is).
   * Anything else is ignored, with a `diag` warning.
   */
  readonly retryOf?: unknown;
  /**
   * The attempt number of this call (the first call is 1). Default, when `retryOf` is a result or error: the earlier
   * call's attempt + 1; with a span id, none is recorded.
   */
  readonly attempt?: number | undefined;
  /** `gen_ai.tool.call.id`: the model's id for this tool call. */
  readonly toolCallId?: string | undefined;
  /**
   * Tokens the model spent on this call, as `gen_ai.usage.input_tokens` / `output_tokens`: Errata counts them as
   * wasted tokens when the call is a wasted retry. Whole numbers from 0.
   */
  readonly inputTokens?: number | undefined;
  readonly outputTokens?: number | undefined;
}
