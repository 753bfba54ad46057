/**
 * `search_tickets` is seed 000's `searchSupportTickets`, kept as the seed wrote it: a good validation contract in
 * the `{ ok, data, error }` envelope, but `isError: true` with `NO_TICKETS_FOUND` when nothing matches. Seeds 003
 * and 004 call that an anti-pattern (a search that found nothing answered correctly): Errata reports it as
 * empty-as-error.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { TICKETS, type Ticket } from './catalog.data';
import { jsonResult } from './tool-results';

type TicketStatus = Ticket['status'] | 'any';

interface ToolError {
  readonly code: string;
  readonly category: string;
  readonly message: string;
  readonly recoverable: boolean;
  readonly automatic_retry_allowed: boolean;
  readonly suggested_action: string;
  readonly field_errors?: readonly { field: string; received?: unknown; expected: string }[];
  readonly example_arguments?: Record<string, unknown>;
}

const toolSuccess = (data: Record<string, unknown>) => jsonResult(false, { ok: true, data, error: null });
const toolError = (error: ToolError) => jsonResult(true, { ok: false, data: null, error });

/** Tickets whose subject holds every word of the query. */
function findTickets(query: string, status: TicketStatus, maxResults: number): Ticket[] {
  const words = query.toLowerCase().split(/\s+/);
  return TICKETS.filter(
    (ticket) =>
      (status === 'any' || ticket.status === status) &&
      words.every((word) => ticket.subject.toLowerCase().includes(word)),
  ).slice(0, maxResults);
}

function searchSupportTickets(args: {
  query?: string;
  status?: TicketStatus;
  maxResults?: number;
}): CallToolResult {
  const query = args.query?.trim();
  const maxResults = args.maxResults ?? 5;
  if (!query) {
    return toolError({
      code: 'MISSING_QUERY',
      category: 'validation',
      message: 'query is required and must be a short, focused search phrase.',
      recoverable: true,
      automatic_retry_allowed: true,
      suggested_action: "Retry with a focused query such as 'refund not received'.",
      field_errors: [{ field: 'query', received: args.query, expected: 'Non-empty string search phrase' }],
      example_arguments: { query: 'refund not received', status: 'any', maxResults: 5 },
    });
  }
  if (maxResults < 1 || maxResults > 20) {
    return toolError({
      code: 'INVALID_MAX_RESULTS',
      category: 'validation',
      message: 'maxResults must be between 1 and 20.',
      recoverable: true,
      automatic_retry_allowed: true,
      suggested_action: 'Retry with maxResults between 1 and 20.',
      field_errors: [{ field: 'maxResults', received: maxResults, expected: 'Integer from 1 to 20' }],
      example_arguments: { query, status: args.status ?? 'any', maxResults: 5 },
    });
  }
  const tickets = findTickets(query, args.status ?? 'any', maxResults);
  if (tickets.length === 0) {
    return toolError({
      code: 'NO_TICKETS_FOUND',
      category: 'not_found',
      message: 'No support tickets matched the query and filters.',
      recoverable: true,
      automatic_retry_allowed: false,
      suggested_action: 'Ask the user for another keyword, customer, date range, or broader filter.',
    });
  }
  return toolSuccess({ tickets, result_count: tickets.length, truncated: tickets.length === maxResults });
}

export function registerTicketTools(server: McpServer): void {
  server.registerTool(
    'search_tickets',
    {
      title: 'Search support tickets',
      description: 'Searches support tickets by keywords in their subject.',
      inputSchema: {
        query: z.string().optional().describe('A short, focused search phrase'),
        status: z.enum(['open', 'pending', 'solved', 'closed', 'any']).optional(),
        maxResults: z.number().int().optional().describe('1 to 20, default 5'),
      },
      annotations: { readOnlyHint: true },
    },
    (args) => searchSupportTickets(args),
  );
}
