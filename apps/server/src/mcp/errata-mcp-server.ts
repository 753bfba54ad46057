import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { FINDING_RULES } from '@errata/domain';
import { z } from 'zod';
import { readFor } from '../database/abandoned-reads';
import { FINDING_ID, FINDING_ID_FORM, MAX_LIMIT, parsePage } from '../http/findings-page';
import { parseReportFilter, parseReportQuery, withGroupPage } from '../http/report-query';
import type { AgentReportsService } from '../services/agent-reports.service';
import type { Principal } from '../services/api-key.service';
import type { FindingsService } from '../services/findings.service';
import type { FixService } from '../services/fix.service';
import type { ReadAdmission } from '../services/read-admission';
import {
  DEFAULT_RETRY_WASTE_GROUPING,
  RETRY_WASTE_GROUPINGS,
  type RetryWasteService,
} from '../services/retry-waste.service';
import { SERVER_VERSION } from '../version';
import {
  AdminKeyRequired,
  answerInvalidParams,
  readsBusy,
  refuseUnknownTools,
  sdkToolError,
  toolError,
  ToolError,
} from './tool-errors';

export interface ErrataMcpServices {
  readonly retryWaste: RetryWasteService;
  readonly agentReports: AgentReportsService;
  readonly findings: FindingsService;
  readonly fixes: FixService;
  /** The places among ERRATA_MAX_CONCURRENT_READS that REST's report and findings routes take too. */
  readonly reads: ReadAdmission;
}

/** What the SDK gives a tool beside its arguments: here, the signal aborted when the HTTP client goes away. */
interface ToolCall {
  readonly signal: AbortSignal;
}

/**
 * Errata's own tools follow the contract Errata recommends (DOMAIN.md §7, seed 000): every result is one envelope
 * `{ ok, data, error }` that the output schema admits in both shapes, mirrored as JSON in a text block; every
 * failure carries `errorCategory`, `isRetryable`, a stable `code` and a description; an empty result is a success.
 */
const ENVELOPE = {
  ok: z.boolean().describe('true with `data`, false with `error`'),
  data: z.unknown().nullable().describe('the report, list or suggestion; null on failure'),
  error: ToolError.nullable().describe('why the call failed, and whether retrying can help; null on success'),
};

const FILTERS = {
  from: z
    .string()
    .optional()
    .describe(
      "ISO-8601 start of the window, inclusive, on each record's start time (e.g. 2026-11-29T00:00:00Z, UTC " +
        'without an offset); without it, the earliest record',
    ),
  to: z
    .string()
    .optional()
    .describe("ISO-8601 end of the window, exclusive, on each record's start time; without it, no end"),
  server: z
    .string()
    .optional()
    .describe(
      'an MCP server name (serverInfo.name); "(unknown)" for the calls whose server did not say its name',
    ),
  tool: z.string().optional().describe('a tool name'),
  agent: z.string().optional().describe("an agent run's gen_ai.agent.name or gen_ai.agent.id"),
};
type Filters = { [K in keyof typeof FILTERS]?: string };

/** A grouped report's page of groups (`withGroupPage`). */
const GROUP_PAGE = {
  limit: z.number().int().min(1).max(MAX_LIMIT).optional().describe(`groups, 1–${MAX_LIMIT}, default 50`),
  // No max(MAX_SAFE_INTEGER): int() bounds it already, and a second bound would refuse a large offset twice.
  offset: z.number().int().min(0).optional().describe('groups to skip, default 0'),
};
type GroupPageArgs = { limit?: number; offset?: number };

/**
 * A tool's arguments, refusing any it does not take (`additionalProperties: false` in its JSON Schema): a misspelt
 * filter would otherwise be dropped, and the answer would cover what the caller meant to leave out.
 */
const strict = <Shape extends z.ZodRawShape>(shape: Shape) => z.object(shape).strict();

const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;

/** A finding's id, with the pattern in the schema: a client can check it before calling. */
const FINDING_ID_ARGUMENT = z
  .string()
  .regex(FINDING_ID, `a finding id is ${FINDING_ID_FORM} (list_findings gives them)`)
  .describe(`an id from list_findings (${FINDING_ID_FORM})`);

function mirrored(payload: { ok: boolean; data: unknown; error: ToolError | null }): CallToolResult {
  return {
    ...(payload.ok ? {} : { isError: true }),
    content: [{ type: 'text', text: JSON.stringify(payload) }],
    structuredContent: payload,
  };
}

/** Runs a tool body: its value as a success, every failure as Errata's error envelope. */
async function envelope(body: () => Promise<unknown>): Promise<CallToolResult> {
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
async function admitted(
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

/** The query-string shape the REST parsers read: only the given filters. */
const asQuery = (args: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(args).filter(([, value]) => value !== undefined));

/** One MCP server per request (stateless Streamable HTTP), bound to the caller's project. */
export function errataMcpServer(services: ErrataMcpServices, principal: Principal): McpServer {
  const server = new McpServer({ name: 'errata', version: SERVER_VERSION });
  // Private in the SDK's types, and what its tools/call handler answers those failures with: they get the envelope.
  (server as unknown as { createToolError(message: string): CallToolResult }).createToolError = (message) =>
    mirrored({ ok: false, data: null, error: sdkToolError(message) });
  const { projectId } = principal;
  const read = (call: ToolCall, body: () => Promise<unknown>) => admitted(services.reads, call, body);

  server.registerTool(
    'get_retry_waste',
    {
      description:
        'Retries agents spent on MCP tools, grouped by the category, server or tool of the call they retried: ' +
        'wasted retries, milliseconds and tokens, the reason of every retry, chains that never recovered, and ' +
        "each group's latest wasted retries (trace and span ids, reason, agent).",
      inputSchema: strict({
        ...FILTERS,
        groupBy: z
          .enum(['category', 'server', 'tool'])
          .optional()
          .describe(
            'what the groups are: the category, server or tool of the retried call; default category',
          ),
        ...GROUP_PAGE,
      }),
      outputSchema: ENVELOPE,
      annotations: READ_ONLY,
    },
    ({ groupBy, ...filters }: Filters & { groupBy?: string } & GroupPageArgs, call: ToolCall) =>
      read(call, () =>
        services.retryWaste.report(
          projectId,
          withGroupPage(asQuery({ ...filters, groupBy }), (rest) =>
            parseReportQuery(rest, RETRY_WASTE_GROUPINGS, DEFAULT_RETRY_WASTE_GROUPING),
          ),
        ),
      ),
  );

  server.registerTool(
    'list_misclassified_results',
    {
      description:
        'Per server and tool: valid empty results reported as errors (empty-as-error) and failures reported as ' +
        'success (failure-as-empty), with rates, the retries and escalations they caused, and redacted samples.',
      inputSchema: strict({ ...FILTERS, ...GROUP_PAGE }),
      outputSchema: ENVELOPE,
      annotations: READ_ONLY,
    },
    (filters: Filters & GroupPageArgs, call: ToolCall) =>
      read(call, () =>
        services.agentReports.misclassified(projectId, withGroupPage(asQuery(filters), parseReportFilter)),
      ),
  );

  server.registerTool(
    'get_escalation_rates',
    {
      description:
        'How often failures of each category ended in a hand-off to a human, the user or a coordinator, which ' +
        'failures the hand-offs followed, and how many were avoidable.',
      inputSchema: strict(FILTERS),
      outputSchema: ENVELOPE,
      annotations: READ_ONLY,
    },
    (filters: Filters, call: ToolCall) =>
      read(call, () => services.agentReports.escalations(projectId, parseReportFilter(asQuery(filters)))),
  );

  server.registerTool(
    'get_subagent_coverage',
    {
      description:
        'How much delegated work subagents brought back, whether their failure reports carried category, ' +
        'attempts, partial results and alternatives, how often they absorbed transient failures, and silent partials.',
      inputSchema: strict(FILTERS),
      outputSchema: ENVELOPE,
      annotations: READ_ONLY,
    },
    (filters: Filters, call: ToolCall) =>
      read(call, () =>
        services.agentReports.subagentCoverage(projectId, parseReportFilter(asQuery(filters))),
      ),
  );

  server.registerTool(
    'list_findings',
    {
      description:
        'Error-contract findings per MCP server, tool and rule, most frequent first: count, rate, first and last ' +
        'seen, server versions, evidence, and the retries, wasted time and escalations they caused.',
      inputSchema: strict({
        ...FILTERS,
        rule: z
          .enum(FINDING_RULES as unknown as [string, ...string[]])
          .optional()
          .describe('only the findings of this rule'),
        limit: z.number().int().min(1).max(MAX_LIMIT).optional().describe(`1–${MAX_LIMIT}, default 50`),
        // int() keeps it within the safe integers (and says so in the JSON Schema): a max() beside it told a too
        // large offset twice.
        offset: z.number().int().min(0).optional().describe('findings to skip, default 0'),
      }),
      outputSchema: ENVELOPE,
      annotations: READ_ONLY,
    },
    (
      { rule, limit, offset, ...filters }: Filters & { rule?: string; limit?: number; offset?: number },
      call: ToolCall,
    ) =>
      read(call, () =>
        services.findings.list(
          projectId,
          parseReportFilter(asQuery(filters)),
          parsePage(rule, limit, offset),
        ),
      ),
  );

  server.registerTool(
    'get_fix_suggestion',
    {
      description:
        'The fix Errata suggests for one finding: the exact result the tool should return instead, a TypeScript ' +
        'handler for the MCP SDK, what the fix would have saved in the window, and Markdown for a tracker.',
      inputSchema: strict({
        findingId: FINDING_ID_ARGUMENT,
        ...FILTERS,
      }),
      outputSchema: ENVELOPE,
      annotations: READ_ONLY,
    },
    ({ findingId, ...filters }: Filters & { findingId: string }, call: ToolCall) =>
      read(call, async () => {
        const { suggestedContract, samples, ...finding } = await services.findings.get(
          projectId,
          findingId,
          parseReportFilter(asQuery(filters)),
        );
        return { finding: { ...finding, samples }, suggestedContract };
      }),
  );
  server.registerTool(
    'acknowledge_fix',
    {
      description:
        "Record that the MCP server's owner acknowledged the fix Errata suggested for a finding (admin key). " +
        'Errata then verifies it from later traffic: a newer server version that stops violating the rule.',
      inputSchema: strict({ findingId: FINDING_ID_ARGUMENT }),
      outputSchema: ENVELOPE,
      // It records an acknowledgement (an event): nothing is deleted or overwritten, which MCP assumes unless told.
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    // A read place, as REST's POST findings/:id/acknowledge takes: an id with no fix is looked up in the findings over
    // the project's whole history, a report as long as any. A read key is refused before it waits for one.
    ({ findingId }: { findingId: string }, call: ToolCall) =>
      principal.scope === 'admin'
        ? read(call, () => services.fixes.acknowledge(projectId, findingId, 'mcp'))
        : envelope(() => Promise.reject(new AdminKeyRequired('acknowledge_fix needs an admin key'))),
  );
  // Stateless, one server per request with no stream to send on (GET /mcp is 405): it can never send
  // notifications/tools/list_changed, which the SDK advertises for every server with tools.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  refuseUnknownTools(server);
  answerInvalidParams(server);
  return server;
}
