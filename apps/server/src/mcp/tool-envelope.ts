import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { readFor } from '../database/abandoned-reads';
import type { AgentReportsService } from '../services/agent-reports.service';
import type { Principal } from '../services/api-key.service';
import type { FindingsService } from '../services/findings.service';
import type { FixService } from '../services/fix.service';
import type { ReadAdmission } from '../services/read-admission';
import type { RetryWasteService } from '../services/retry-waste.service';
import type { TraceTimelineService } from '../services/trace-timeline.service';
import { readsBusy, toolError, ToolError } from './tool-errors';

export interface ErrataMcpServices {
  readonly retryWaste: RetryWasteService;
  readonly agentReports: AgentReportsService;
  readonly findings: FindingsService;
  readonly fixes: FixService;
  readonly timelines: TraceTimelineService;
  /** The places among ERRATA_MAX_CONCURRENT_READS that REST's reads (reports, findings, servers, traces) take too. */
  readonly reads: ReadAdmission;
}

/** What the SDK gives a tool beside its arguments: here, the signal aborted when the HTTP client goes away. */
export interface ToolCall {
  readonly signal: AbortSignal;
}

/** What a file of tools registers them with: the request's server, bound to the caller's project. */
export interface ToolContext {
  readonly server: McpServer;
  readonly services: ErrataMcpServices;
  readonly principal: Principal;
  /** Runs a read tool's body in a read place (`admitted`). */
  readonly read: (call: ToolCall, body: () => Promise<unknown>) => Promise<CallToolResult>;
}

/**
 * Errata's own tools follow the contract Errata recommends (DOMAIN.md §7, seed 000): every result is one envelope
 * `{ ok, data, error }` that the output schema admits in both shapes, mirrored as JSON in a text block; every
 * failure carries `errorCategory`, `isRetryable`, a stable `code` and a description; an empty result is a success.
 */
export const ENVELOPE = {
  ok: z.boolean().describe('true with `data`, false with `error`'),
  data: z.unknown().nullable().describe('the report, list or suggestion; null on failure'),
  error: ToolError.nullable().describe('why the call failed, and whether retrying can help; null on success'),
};

export const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;

export function mirrored(payload: { ok: boolean; data: unknown; error: ToolError | null }): CallToolResult {
  return {
    ...(payload.ok ? {} : { isError: true }),
    content: [{ type: 'text', text: JSON.stringify(payload) }],
    structuredContent: payload,
  };
}

/** Runs a tool body: its value as a success, every failure as Errata's error envelope. */
export async function envelope(body: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    return mirrored({ ok: true, data: await body(), error: null });
  } catch (error) {
    return mirrored({ ok: false, data: null, error: toolError(error) });
  }
}

/**
 * Runs a read tool's body in a place among `ERRATA_MAX_CONCURRENT_READS`, as REST's reads are (`ReadAdmitted`):
 * without one, MCP clients ran reports past the bound and took the pool connections ingest and the projector need.
 * Past the queue the call fails as a tool result, `ERRATA_BUSY` (transient, retryable, `retryAfterMs`): the call was
 * valid, so it is a tool execution error the model sees, not a JSON-RPC error (README, "Errata's MCP endpoint").
 */
export async function admitted(
  reads: ReadAdmission,
  call: ToolCall,
  body: () => Promise<unknown>,
): Promise<CallToolResult> {
  const entry = await reads.enter(call.signal);
  // 'abandoned': the client went away while the call waited; the SDK sends nothing for a request whose signal is
  // aborted, so which failure it is told does not matter, only that no query runs.
  if (entry !== 'admitted') return mirrored({ ok: false, data: null, error: readsBusy() });
  try {
    // Its statements are canceled if the client goes meanwhile (`readFor`), failing as CallerGoneError.
    return await envelope(() => readFor(call.signal, body));
  } finally {
    reads.leave();
  }
}
