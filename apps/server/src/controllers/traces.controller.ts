import { Controller, Get, Param, Query, UseGuards, UseInterceptors } from '@nestjs/common';
import { TIMELINE_PAGE_DEFAULT, TIMELINE_PAGE_MAX, TIMELINE_RUNS_PAGE } from '@errata/domain';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { DocumentedQueryOnly } from '../http/documented-query.interceptor';
import { ReadAdmitted } from '../http/read-admission.interceptor';
import { ApiKeyGuard, CurrentPrincipal, RequireScope } from '../http/api-key.guard';
import { ApiReadKey, QueryParameter } from '../http/openapi';
import { parseTimelinePage, parseTraceId, SPAN_ID_FORM, TRACE_ID_FORM } from '../http/timeline-page-query';
import { ApiErrors, ApiOk } from '../http/openapi-schemas';
import type { Principal } from '../services/api-key.service';
import { TraceTimelineService } from '../services/trace-timeline.service';

@ApiTags('traces')
@ApiReadKey()
@Controller('api/v1/traces')
@UseGuards(ApiKeyGuard)
@UseInterceptors(DocumentedQueryOnly, ReadAdmitted)
@RequireScope('read')
export class TracesController {
  constructor(private readonly timelines: TraceTimelineService) {}

  @Get(':traceId')
  @ApiOperation({
    summary:
      "A page of one trace's calls, retries, escalations and subagent reports, in order, with its agent runs",
    description:
      'Items come in pages of `limit` (200 unless asked; 1,000 at most), in start order (then span id). `page` says ' +
      'how many there are (`total`), where the page lies (`offset`), and the cursors to read on: `page.after` as ' +
      '`after` reads the next page, `page.before` as `before` the one before; null at either end. Cursors name an ' +
      'item, not a position, so items that arrive meanwhile are neither repeated nor skipped. `span` asks for the ' +
      'page holding that item (the page a walk from the start with the same `limit` reaches it in); `run` pages ' +
      "through one run's items only. `runs` lists the trace's runs (in the order of their first item), each with its " +
      `\`itemCount\`: all of them when there are ${TIMELINE_RUNS_PAGE} at most; else the ${TIMELINE_RUNS_PAGE} of ` +
      "them holding the page's run (`run`, else the run of its first item), a stretch of a walk by " +
      `${TIMELINE_RUNS_PAGE} from the first. \`runCount\` says how many runs there are and \`runOffset\` where ` +
      '`runs` lies among them; `runOffset` asks for the runs from that position instead. `itemCount` counts the ' +
      "trace's items, of every run.",
  })
  @ApiParam({ name: 'traceId', description: `A trace id (${TRACE_ID_FORM})` })
  @QueryParameter({
    name: 'limit',
    required: false,
    description: 'Items per page.',
    schema: { type: 'integer', minimum: 1, maximum: TIMELINE_PAGE_MAX, default: TIMELINE_PAGE_DEFAULT },
  })
  @QueryParameter({
    name: 'run',
    required: false,
    description: "Only this run's items (a `runId` of `runs`); `page.total` counts them.",
    schema: { type: 'string' },
  })
  @QueryParameter({
    name: 'runOffset',
    required: false,
    description:
      `List the runs from this position (\`runOffset\` of the answer, plus ${TIMELINE_RUNS_PAGE} for the next ` +
      "ones) rather than those around the page's run. Items are paged as without it.",
    schema: { type: 'integer', minimum: 0 },
  })
  @QueryParameter({
    name: 'after',
    required: false,
    description:
      'The items after this cursor (`page.after` of the page before). One of `after`, `before`, `span`.',
    schema: { type: 'string' },
  })
  @QueryParameter({
    name: 'before',
    required: false,
    description: 'The items just before this cursor (`page.before` of the page after).',
    schema: { type: 'string' },
  })
  @QueryParameter({
    name: 'span',
    required: false,
    description: `The page holding the item with this span id (${SPAN_ID_FORM}); 404 when the trace (the run) has none.`,
    schema: { type: 'string' },
  })
  @ApiOk('TraceTimeline')
  @ApiErrors(400, 401, 403, 404)
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('traceId') traceId: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.timelines.timeline(principal.projectId, parseTraceId(traceId), parseTimelinePage(query));
  }
}
