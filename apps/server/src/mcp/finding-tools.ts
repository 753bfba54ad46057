import { DEFAULT_SCORECARD_TOOLS, FINDING_RULES, MAX_SCORECARD_TOOLS } from '@errata/domain';
import { FINDING_ID, FINDING_ID_FORM, parseFindingId, parsePage } from '../http/findings-page';
import { parseReportFilter, parseScorecardQuery } from '../http/report-query';
import { AdminKeyRequired } from './tool-errors';
import {
  asQuery,
  FILTERS,
  oneOfArgument,
  pageArguments,
  patternArgument,
  strict,
  wholeNumberArgument,
  type Filters,
  type GroupPageArgs,
} from './tool-arguments';
import { ENVELOPE, envelope, READ_ONLY, type ToolCall, type ToolContext } from './tool-envelope';

/** A finding's id (`parseFindingId`), with the pattern in the schema: a client can check it before calling. */
const FINDING_ID_ARGUMENT = patternArgument(FINDING_ID).describe(
  `an id from list_findings (${FINDING_ID_FORM})`,
);

type ScorecardArgs = Filters & GroupPageArgs & { toolLimit?: number; toolOffset?: number };

/** The scorecard and the findings of `GET /servers` and `GET /findings…`, and a fix's acknowledgement. */
export function registerFindingTools({ server, services, principal, read }: ToolContext): void {
  const { projectId } = principal;

  server.registerTool(
    'list_servers',
    {
      description:
        'A graded scorecard per MCP server and tool: calls, failures, calls that violate an error-contract rule ' +
        'and a grade from their share (A none, B < 1 %, C < 5 %, D < 20 %, F otherwise), and per tool the rules ' +
        'it broke. Servers by name (groupCount: how many), a page of them; each lists a page of its tools, most ' +
        'violating calls first (toolCount: how many it has; its figures are over all of them).',
      inputSchema: strict({
        ...FILTERS,
        ...pageArguments('servers'),
        toolLimit: wholeNumberArgument('toolLimit', 1, MAX_SCORECARD_TOOLS)
          .optional()
          .describe(`tools listed per server, 1–${MAX_SCORECARD_TOOLS}, default ${DEFAULT_SCORECARD_TOOLS}`),
        toolOffset: wholeNumberArgument('toolOffset', 0, Number.MAX_SAFE_INTEGER)
          .optional()
          .describe(
            "tools to skip first, per server: with toolLimit, a page of each server's tools; default 0",
          ),
      }),
      outputSchema: ENVELOPE,
      annotations: READ_ONLY,
    },
    (args: ScorecardArgs, call: ToolCall) =>
      read(call, () => services.findings.servers(projectId, parseScorecardQuery(asQuery(args)))),
  );

  server.registerTool(
    'list_findings',
    {
      description:
        'Error-contract findings per MCP server, tool and rule, most frequent first: count, rate, first and last ' +
        'seen, server versions, evidence, and the retries, wasted time and escalations they caused.',
      inputSchema: strict({
        ...FILTERS,
        rule: oneOfArgument('rule', FINDING_RULES).optional().describe('only the findings of this rule'),
        ...pageArguments('findings'),
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
          parseFindingId(findingId),
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
      // Once is enough: a repeated call records nothing more.
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    // A read place, as REST's POST findings/:id/acknowledge takes: an id with no fix is looked up in the findings over
    // the project's whole history, a report as long as any. A read key is refused before it waits for one, and before
    // its finding id is looked at, as REST's guard answers 403 first.
    ({ findingId }: { findingId: string }, call: ToolCall) =>
      principal.scope === 'admin'
        ? read(call, () => services.fixes.acknowledge(projectId, parseFindingId(findingId), 'mcp'))
        : envelope(() => Promise.reject(new AdminKeyRequired('acknowledge_fix needs an admin key'))),
  );
}
