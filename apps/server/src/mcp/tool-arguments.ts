import { z } from 'zod';
import { MAX_LIMIT, wholeNumberRefusal } from '../http/findings-page';

/** The report filters (DOMAIN.md §8), as every report tool takes them. */
export const FILTERS = {
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
export type Filters = { [K in keyof typeof FILTERS]?: string };

/** A grouped report's page of groups (`withGroupPage`). */
export const GROUP_PAGE = {
  limit: z.number().int().min(1).max(MAX_LIMIT).optional().describe(`groups, 1–${MAX_LIMIT}, default 50`),
  // No max(MAX_SAFE_INTEGER): int() bounds it already, and a second bound would refuse a large offset twice.
  offset: z.number().int().min(0).optional().describe('groups to skip, default 0'),
};
export type GroupPageArgs = { limit?: number; offset?: number };

/**
 * A tool's arguments, refusing any it does not take (`additionalProperties: false` in its JSON Schema): a misspelt
 * filter would otherwise be dropped, and the answer would cover what the caller meant to leave out.
 */
export const strict = <Shape extends z.ZodRawShape>(shape: Shape) => z.object(shape).strict();

/** The query-string shape the REST parsers read: only the given arguments. */
export const asQuery = (args: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(args).filter(([, value]) => value !== undefined));

/**
 * A whole-number argument from `min` to `max`: the bounds in its JSON Schema, for a client to check before calling,
 * and one refusal in REST's words (`wholeNumber`) for whichever of them it breaks.
 */
export function wholeNumberArgument(name: string, min: number, max: number) {
  const error = wholeNumberRefusal(name, min, max);
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}
