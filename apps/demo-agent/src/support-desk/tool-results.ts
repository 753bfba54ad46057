/**
 * The result envelopes of the seeds: a failure is a tool result with `isError: true` whose `structuredContent`
 * carries the contract (`errorCategory`, `isRetryable`, a stable `code`, `description`, …) and whose text block
 * mirrors it as JSON, because the model reads `content`, not `structuredContent`.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export type ErrorCategory = 'transient' | 'validation' | 'business' | 'permission';

export interface ErrorContract {
  readonly errorCategory: ErrorCategory;
  /** For validation errors: retryable after the arguments are corrected (seed 000), never as they are. */
  readonly isRetryable: boolean;
  readonly code: string;
  readonly description: string;
  readonly retryAfterMs?: number;
  /** Business errors: what the agent can tell the customer, word for word. */
  readonly customerExplanation?: string;
  readonly suggestedNextAction?: string;
  readonly field?: string;
  readonly expected?: string;
  readonly received?: unknown;
}

/** `payload` as `structuredContent`, mirrored as JSON in a text block (the MCP spec's backward-compatible form). */
export function jsonResult(isError: boolean, payload: Record<string, unknown>): CallToolResult {
  return { isError, content: [{ type: 'text', text: JSON.stringify(payload) }], structuredContent: payload };
}

export const contractError = (error: ErrorContract): CallToolResult => jsonResult(true, { ...error });

/** A successful structured result, a valid empty list included. */
export const structuredResult = (data: Record<string, unknown>): CallToolResult => jsonResult(false, data);
