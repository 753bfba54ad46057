/**
 * Why a tool of Errata's MCP endpoint failed, as the contract Errata recommends (DOMAIN.md §7, seed 000) says:
 * a category, whether retrying can help, a stable code and a description of how to recover.
 */
import { BadRequestException, Logger } from '@nestjs/common';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { CallerGoneError } from '../database/abandoned-reads';
import { isDatabaseUnavailable, isStatementCanceled } from '../database/database-unavailable';
import { FindingNotFound, FixNotFound } from '../services/finding-not-found';
import { READ_RETRY_AFTER_SECONDS } from '../services/read-admission';
import { TimelineItemNotFound, TimelineRunNotFound, TraceNotFound } from '../services/trace-not-found';

export const ToolError = z.object({
  errorCategory: z.enum(['transient', 'validation', 'business', 'permission']),
  isRetryable: z.boolean(),
  code: z.string(),
  description: z.string(),
  retryAfterMs: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('for a transient failure: how long to wait before retrying, when Errata knows'),
});
export type ToolError = z.infer<typeof ToolError>;

/** A tool only an admin key may use was called with a read key. */
export class AdminKeyRequired extends Error {}

const logger = new Logger('ErrataMcp');

export function toolError(error: unknown): ToolError {
  // A read stopped because its client went away: the SDK sends nothing for a call whose signal is aborted, so what
  // it is told does not matter; only that it is not logged as a failure (its 57014 is no statement timeout).
  if (error instanceof CallerGoneError) return readsBusy();
  if (error instanceof AdminKeyRequired) {
    return {
      errorCategory: 'permission',
      isRetryable: false,
      code: 'ADMIN_KEY_REQUIRED',
      description: `${error.message}. Connect with an admin key of this project to acknowledge fixes.`,
    };
  }
  if (error instanceof FindingNotFound) {
    return {
      errorCategory: 'validation',
      isRetryable: true,
      code: 'FINDING_NOT_FOUND',
      description:
        `${error.message} in this project over the window and filters given (without from/to: all of its ` +
        'history). Call list_findings with the same filters for the ids there are, or call again with a window ' +
        'that holds the finding (list_findings gives its firstSeen and lastSeen).',
    };
  }
  if (error instanceof FixNotFound) {
    return {
      errorCategory: 'business',
      isRetryable: false,
      code: 'FIX_NOT_FOUND',
      description:
        `${error.message}: Errata suggests a fix only to an owner registered for the finding's server, at its ` +
        'next fix round after the registration. An admin registers one (POST /api/v1/owners, or ' +
        '`errata owners add`); until then there is nothing to acknowledge, and retrying gives the same answer.',
    };
  }
  if (error instanceof TraceNotFound) {
    return {
      errorCategory: 'validation',
      isRetryable: true,
      code: 'TRACE_NOT_FOUND',
      description:
        `${error.message} in this project. Trace ids come from the samples of get_retry_waste and ` +
        "list_misclassified_results and from a finding's samples (get_fix_suggestion): call again with one of " +
        'those. A trace whose spans were sent only seconds ago may not be read yet: then retry shortly.',
    };
  }
  if (error instanceof TimelineItemNotFound) {
    const instead =
      error.run === null
        ? "Call again without `span` for the trace's first page, and check the span id against the sample that " +
          'gave it (a spanId goes with its traceId).'
        : 'Call again without `run` for the page of the whole trace that holds it (the item may be of another ' +
          "run), or without `span` for the run's first page.";
    return {
      errorCategory: 'validation',
      isRetryable: true,
      code: 'SPAN_NOT_FOUND',
      description: `${error.message}. ${instead}`,
    };
  }
  if (error instanceof TimelineRunNotFound) {
    return {
      errorCategory: 'validation',
      isRetryable: true,
      code: 'RUN_NOT_FOUND',
      description:
        `${error.message}. Call again without \`run\` for the page of the whole trace, whose runs list the trace's ` +
        'runs (runId), or with one of those.',
    };
  }
  if (error instanceof BadRequestException) {
    return {
      errorCategory: 'validation',
      isRetryable: true,
      code: 'INVALID_ARGUMENTS',
      description: `${error.message}. Correct the argument and retry.`,
    };
  }
  if (isDatabaseUnavailable(error)) {
    logger.warn(`database unavailable: ${(error as Error).message}`);
    return {
      errorCategory: 'transient',
      isRetryable: true,
      code: 'ERRATA_UNAVAILABLE',
      description:
        'Errata could not read its database just now. The request is valid; retry after a few seconds.',
    };
  }
  // ERRATA_PG_QUERY_TIMEOUT_MS is PostgreSQL's statement_timeout: a statement it cut off is answered as the stall
  // the same bound catches on the client's side was before (REST says 503 + Retry-After for both).
  if (isStatementCanceled(error)) {
    logger.warn(`a statement was canceled: ${(error as Error).message}`);
    return {
      errorCategory: 'transient',
      isRetryable: true,
      code: 'ERRATA_UNAVAILABLE',
      description:
        "Errata's database did not answer in time just now (busy, or waiting on maintenance). The request is " +
        'valid; retry after a few seconds (a shorter from/to window asks less of it).',
    };
  }
  // A failure of Errata's own: the same request would fail the same way, so an agent must not be told to retry it.
  logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  return {
    errorCategory: 'transient',
    isRetryable: false,
    code: 'ERRATA_INTERNAL_ERROR',
    description:
      'Errata failed to answer this request (its log says why). Retrying the same request will fail again; ' +
      'report it to whoever runs Errata, and go on without this figure.',
  };
}

/**
 * A read tool called while Errata answers and queues as many reads as it may (`ERRATA_MAX_CONCURRENT_READS`, the
 * places REST reads take too): a valid call that fails for now, as a REST read is answered 503 + Retry-After.
 */
export function readsBusy(): ToolError {
  return {
    errorCategory: 'transient',
    isRetryable: true,
    code: 'ERRATA_BUSY',
    description:
      'Errata is answering and queueing as many reads as it may just now. The request is valid; retry it ' +
      `unchanged after ${READ_RETRY_AFTER_SECONDS} second${READ_RETRY_AFTER_SECONDS === 1 ? '' : 's'}.`,
    retryAfterMs: READ_RETRY_AFTER_SECONDS * 1000,
  };
}

/** What the SDK writes before the zod issues of refused arguments, one issue a line. */
const ISSUES_HEADER = /^Input validation error: Invalid arguments for tool [^:]*: /;

const distinct = (lines: readonly string[]): string[] => [...new Set(lines)];

/** The MCP SDK's prefix of an McpError's message ("MCP error -32602: "). */
const MCP_ERROR_PREFIX = /^MCP error -?\d+:\s*/;

/**
 * The failures the MCP SDK answers itself as tool results, before a tool body runs: arguments the tool's input schema
 * refuses (a tool that does not exist is a protocol error, `refuseUnknownTools`). As text alone they would break the
 * contract every other failure keeps.
 */
export function sdkToolError(message: string): ToolError {
  // One line per zod issue, each told once: zod can raise one reason twice for a value (an integer past the safe
  // range and past a bound did, when the input schemas checked bounds; REST's parsers check them now).
  const said = message.replace(MCP_ERROR_PREFIX, '');
  const header = ISSUES_HEADER.exec(said)?.[0] ?? '';
  const reason = header + distinct(said.slice(header.length).split('\n')).join('\n');
  if (/^(Input validation error|Invalid arguments for tool)/.test(reason)) {
    return {
      errorCategory: 'validation',
      isRetryable: true,
      code: 'INVALID_ARGUMENTS',
      description: `${reason}. Correct the argument and retry.`,
    };
  }
  return toolError(new Error(reason));
}

/**
 * A JSON-RPC error as the client should read it: the SDK's McpError writes "MCP error <code>: " into its message,
 * which the client's McpError writes again ("MCP error -32602: MCP error -32602: …"). The SDK answers any thrown
 * error with its `code` and `message`.
 */
class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * tools/call for a tool Errata does not have is a protocol error, JSON-RPC -32602 (MCP 2025-11-25, "Error Handling":
 * unknown tools are protocol errors). The SDK answers it as a tool result with isError, which tells the model the tool
 * ran and failed.
 */
export function refuseUnknownTools(server: McpServer): void {
  // Private in the SDK's types: the registered tools by name, and the handlers by method.
  const internals = server as unknown as {
    _registeredTools: Record<string, unknown>;
    server: { _requestHandlers: Map<string, RequestHandler> };
  };
  const handlers = internals.server._requestHandlers;
  const callTool = handlers.get('tools/call');
  if (callTool === undefined) throw new Error('no tools/call handler: register the tools first');
  handlers.set('tools/call', async (request, extra) => {
    const name = (request as { params?: { name?: unknown } }).params?.name;
    if (typeof name === 'string' && !Object.hasOwn(internals._registeredTools, name))
      throw new ProtocolError(
        ErrorCode.InvalidParams,
        `Unknown tool: ${name}. Call tools/list for the tools Errata has.`,
      );
    return callTool(request, extra);
  });
}

type RequestHandler = (request: { method: string }, extra: unknown) => Promise<unknown>;

/**
 * Requests whose params the MCP SDK's own schemas refuse (a tools/call without a `name`, `arguments` that are not
 * an object) are the caller's mistake: JSON-RPC -32602 Invalid params, said plainly. The SDK answers them -32603
 * Internal error with zod's dump of the issues, which tells a client to look for the fault at Errata's end.
 */
export function answerInvalidParams(server: McpServer): void {
  // Private in the SDK's types: the handlers by method, each parsing its request with the method's schema first.
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, RequestHandler> })
    ._requestHandlers;
  for (const [method, handle] of handlers) {
    handlers.set(method, async (request, extra) => {
      try {
        return await handle(request, extra);
      } catch (error) {
        // By shape (`ZodError`, or zod 4 core's `$ZodError`): the SDK parses with its own zod build.
        const issues = (error as { issues?: unknown }).issues;
        if (!/^\$?ZodError$/.test((error as Error | undefined)?.name ?? '') || !Array.isArray(issues))
          throw error;
        const said = (issues as { path: PropertyKey[]; message: string }[]).map(
          (issue) => `${['params', ...issue.path.slice(1).map(String)].join('.')}: ${issue.message}`,
        );
        throw new ProtocolError(
          ErrorCode.InvalidParams,
          `Invalid params for ${method}: ${distinct(said).join('; ')}`,
        );
      }
    });
  }
}
