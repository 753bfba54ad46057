/**
 * One `tools/call` as the agent runtime sees it: the result or the error, the outcome under Errata's names
 * (DOMAIN.md §1), and what the contract declares. The call itself goes through the instrumented client, so
 * @errata/sdk records the span; retry hints go through `withToolCall`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isEmptyListPayload, saysNoResults } from '@errata/domain';
import { withToolCall } from '@errata/sdk';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpSession } from '../mcp/mcp-session';
import { declaredError, resultPayload, type DeclaredError } from './declared-error';

export type Outcome = 'ok' | 'ok_empty' | 'tool_error' | 'protocol_error' | 'timeout' | 'transport_error';

export const OUTCOMES: readonly Outcome[] = [
  'ok',
  'ok_empty',
  'tool_error',
  'protocol_error',
  'timeout',
  'transport_error',
];

export interface ToolCallRecord {
  readonly server: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly outcome: Outcome;
  /** What the agent reads: the first text block, or the error message. */
  readonly text: string;
  readonly declared: DeclaredError;
  /** The result returned or the error thrown: what `withToolCall({ retryOf })` takes to name this call. */
  readonly handle: object;
}

/** What a runtime learns about each call, for its own progress counters. */
export type CallListener = (call: ToolCallRecord) => void;

/**
 * A pause before every call, standing in for the model's turn. It also keeps the recorded order of calls
 * unambiguous: OpenTelemetry JS stamps a span's start with `Date.now()`, to the millisecond, so a call started
 * within the millisecond in which the previous one ended can appear to start before it ended, and Errata would
 * not count it as a retry.
 */
const MODEL_TURN_MS = 3;

/** Empty as Errata reads it: no content, an empty list, or a text that only says nothing matched. */
function isEmptyResult(result: CallToolResult, tool: string, firstText: string): boolean {
  const content = result.content ?? [];
  if (content.every((block) => block.type === 'text' && block.text.trim() === '')) return true;
  return isEmptyListPayload(resultPayload(result)) || saysNoResults(firstText, tool);
}

function thrownOutcome(error: unknown): Outcome {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (code === -32001) return 'timeout';
  if (typeof code === 'number' && code !== -32000) return 'protocol_error';
  return 'transport_error';
}

export async function callTool(
  session: McpSession,
  tool: string,
  args: Record<string, unknown>,
  retryOf: object | undefined,
  listener: CallListener,
  /** Called after the model's turn, right before the call; throws (an interruption) to make no call. */
  beforeCall: () => void = () => undefined,
): Promise<ToolCallRecord> {
  const call = () => session.client.callTool({ name: tool, arguments: args }) as Promise<CallToolResult>;
  await sleep(MODEL_TURN_MS);
  beforeCall();
  let record: ToolCallRecord;
  try {
    const result = await (retryOf === undefined ? call() : withToolCall({ retryOf }, call));
    const firstText = result.content?.find((block) => block.type === 'text')?.text ?? '';
    const empty = !result.isError && isEmptyResult(result, tool, firstText);
    record = {
      server: session.label,
      tool,
      args,
      outcome: result.isError ? 'tool_error' : empty ? 'ok_empty' : 'ok',
      text: firstText,
      declared: declaredError(result.isError ? result : null),
      handle: result,
    };
  } catch (error) {
    record = {
      server: session.label,
      tool,
      args,
      outcome: thrownOutcome(error),
      text: error instanceof Error ? error.message : String(error),
      declared: declaredError(null),
      handle: typeof error === 'object' && error !== null ? error : { error },
    };
  }
  listener(record);
  return record;
}
