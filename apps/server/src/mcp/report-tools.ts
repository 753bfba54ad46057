import { parseReportFilter, parseReportQuery, withGroupPage } from '../http/report-query';
import { DEFAULT_RETRY_WASTE_GROUPING, RETRY_WASTE_GROUPINGS } from '../services/retry-waste.service';
import {
  asQuery,
  FILTERS,
  GROUP_PAGE,
  oneOfArgument,
  strict,
  type Filters,
  type GroupPageArgs,
} from './tool-arguments';
import { ENVELOPE, READ_ONLY, type ToolCall, type ToolContext } from './tool-envelope';

/** The reports of `GET /reports/…` as tools (DOMAIN.md §8). */
export function registerReportTools({ server, services, principal, read }: ToolContext): void {
  const { projectId } = principal;

  server.registerTool(
    'get_retry_waste',
    {
      description:
        'Retries agents spent on MCP tools, grouped by the category, server or tool of the call they retried: ' +
        'wasted retries, milliseconds and tokens, the reason of every retry, chains that never recovered, and ' +
        "each group's latest wasted retries (trace and span ids, reason, agent).",
      inputSchema: strict({
        ...FILTERS,
        groupBy: oneOfArgument('groupBy', RETRY_WASTE_GROUPINGS)
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
}
