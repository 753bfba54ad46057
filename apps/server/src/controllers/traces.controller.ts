import { BadRequestException, Controller, Get, Param, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { DocumentedQueryOnly } from '../http/documented-query.interceptor';
import { ReadAdmitted } from '../http/read-admission.interceptor';
import { ApiKeyGuard, CurrentPrincipal, RequireScope } from '../http/api-key.guard';
import { ApiReadKey } from '../http/openapi';
import { ApiErrors, ApiOk } from '../http/openapi-schemas';
import type { Principal } from '../services/api-key.service';
import { TraceTimelineService } from '../services/trace-timeline.service';

const TRACE_ID = /^[0-9a-f]{32}$/;

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
    summary: "One trace's agent runs with their calls, retries, escalations and subagent reports, in order",
  })
  @ApiParam({ name: 'traceId', description: 'A trace id (32 lowercase hex digits)' })
  @ApiOk('TraceTimeline')
  @ApiErrors(400, 401, 403, 404)
  get(@CurrentPrincipal() principal: Principal, @Param('traceId') traceId: string) {
    if (!TRACE_ID.test(traceId)) {
      throw new BadRequestException(`"${traceId}" is not a trace id (32 lowercase hex digits)`);
    }
    return this.timelines.timeline(principal.projectId, traceId);
  }
}
