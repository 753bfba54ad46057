import { TIMELINE_PAGE_DEFAULT, TIMELINE_PAGE_MAX, TIMELINE_RUNS_PAGE } from '@errata/domain';
import { z } from 'zod';
import {
  parseTimelinePage,
  parseTraceId,
  RUN_OFFSET_MAX,
  SPAN_ID,
  SPAN_ID_FORM,
  TRACE_ID,
  TRACE_ID_FORM,
} from '../http/timeline-page-query';
import { asQuery, patternArgument, strict, wholeNumberArgument } from './tool-arguments';
import { ENVELOPE, READ_ONLY, type ToolCall, type ToolContext } from './tool-envelope';

interface TimelineArgs {
  traceId: string;
  limit?: number;
  run?: string;
  runOffset?: number;
  after?: string;
  before?: string;
  span?: string;
}

/** `GET /traces/{traceId}` as a tool: where the samples of the other tools' answers lead. */
export function registerTraceTools({ server, services, principal, read }: ToolContext): void {
  server.registerTool(
    'get_trace_timeline',
    {
      description:
        "A page of one trace's calls, retries, escalations and subagent reports, in order, with its agent runs: " +
        "each call's outcome, category and the evidence that decided it, retry label, findings and redacted text. " +
        'The samples of get_retry_waste, list_misclassified_results and get_fix_suggestion carry a traceId and a ' +
        'spanId: pass them as traceId and span for the page around that call. page.after given as after reads the ' +
        'next page, page.before as before the one before (null at either end); run pages through one run ' +
        `(a runId of runs); runs lists ${TIMELINE_RUNS_PAGE} runs at most (runCount: how many), runOffset others.`,
      inputSchema: strict({
        traceId: patternArgument(TRACE_ID).describe(`a trace id (${TRACE_ID_FORM}): a sample's traceId`),
        limit: wholeNumberArgument('limit', 1, TIMELINE_PAGE_MAX)
          .optional()
          .describe(`items per page, 1–${TIMELINE_PAGE_MAX}, default ${TIMELINE_PAGE_DEFAULT}`),
        run: z
          .string()
          .optional()
          .describe("only this run's items (a runId of runs); page.total counts them"),
        runOffset: wholeNumberArgument('runOffset', 0, RUN_OFFSET_MAX)
          .optional()
          .describe(
            `list the runs from this position (runOffset of an answer, plus ${TIMELINE_RUNS_PAGE} for the next ` +
              "ones) rather than those around the page's run; items are paged as without it",
          ),
        after: z
          .string()
          .optional()
          .describe(
            'the items after this cursor (page.after of the page before); one of after, before, span',
          ),
        before: z
          .string()
          .optional()
          .describe(
            'the items just before this cursor (page.before of the page after); one of after, before, span',
          ),
        span: patternArgument(SPAN_ID)
          .optional()
          .describe(
            `the page holding the item with this span id (${SPAN_ID_FORM}): a sample's spanId; one of after, ` +
              'before, span',
          ),
      }),
      outputSchema: ENVELOPE,
      annotations: READ_ONLY,
    },
    // Checked as REST checks them, in its order (the id, then the page): of two bad arguments, the same one is named.
    ({ traceId, ...page }: TimelineArgs, call: ToolCall) =>
      read(call, () =>
        services.timelines.timeline(
          principal.projectId,
          parseTraceId(traceId),
          parseTimelinePage(asQuery(page)),
        ),
      ),
  );
}
