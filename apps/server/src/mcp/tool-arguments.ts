import { z } from 'zod';
import { DEFAULT_LIMIT, MAX_LIMIT, wholeNumberRefusal } from '../http/findings-page';
import { oneOfRefusal, unknownParameterRefusal } from '../http/text-parameter';

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

/*
 * The arguments below are checked by the REST parsers each tool calls, in REST's order (a window before a page, a
 * position given once before its form, …): checked by the input schema, which the SDK applies before the tool runs,
 * they would be refused first, and of two bad arguments the tool would name another than REST. Their bounds, choices
 * and patterns stay in their JSON Schema, for a client to check before calling; the schema refuses only another JSON
 * type, in REST's words.
 */

/** A whole-number argument from `min` to `max` (REST's `wholeNumber`). */
export function wholeNumberArgument(name: string, min: number, max: number) {
  return z
    .number({ error: wholeNumberRefusal(name, min, max) })
    .meta({ type: 'integer', minimum: min, maximum: max });
}

/** An argument naming one of `choices`. */
export function oneOfArgument(name: string, choices: readonly string[]) {
  return z
    .string({ error: (issue) => oneOfRefusal(name, choices, issue.input) })
    .meta({ enum: [...choices] });
}

/** A text argument of the form `pattern` (an id). */
export const patternArgument = (pattern: RegExp) => z.string().meta({ pattern: pattern.source });

/** A list's page, as REST's `limit` and `offset` take it (`parseLimitOffset`): `limit` of the list's `items`. */
export const pageArguments = (items: string) => ({
  limit: wholeNumberArgument('limit', 1, MAX_LIMIT)
    .optional()
    .describe(`${items}, 1–${MAX_LIMIT}, default ${DEFAULT_LIMIT}`),
  offset: wholeNumberArgument('offset', 0, Number.MAX_SAFE_INTEGER)
    .optional()
    .describe(`${items} to skip, default 0`),
});

/** A grouped report's page of groups (`withGroupPage`). */
export const GROUP_PAGE = pageArguments('groups');

export type GroupPageArgs = { limit?: number; offset?: number };

/**
 * A tool's arguments, refusing any it does not take (`additionalProperties: false` in its JSON Schema): a misspelt
 * filter would otherwise be dropped, and the answer would cover what the caller meant to leave out. Refused as REST
 * refuses a query parameter its route does not take (`DocumentedQueryOnly`).
 */
export const strict = <Shape extends z.ZodRawShape>(shape: Shape) =>
  z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? unknownParameterRefusal(issue.keys[0]!, Object.keys(shape), ['argument', 'tool'])
        : undefined,
  });

/** The query-string shape the REST parsers read: only the given arguments. */
export const asQuery = (args: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(args).filter(([, value]) => value !== undefined));
