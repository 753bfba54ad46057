import { Controller, Get, Query, UseGuards, UseInterceptors } from '@nestjs/common';
import { DEFAULT_SERIES_GROUPS, MAX_SERIES_GROUPS } from '@errata/domain';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { DocumentedQueryOnly } from '../http/documented-query.interceptor';
import { ReadAdmitted } from '../http/read-admission.interceptor';
import { ApiKeyGuard, CurrentPrincipal, RequireScope } from '../http/api-key.guard';
import { ApiGroupPage, ApiReadKey, ApiReportFilters, QueryParameter } from '../http/openapi';
import { ApiErrors, ApiOk } from '../http/openapi-schemas';
import { parseReportQuery, parseReportFilter, parseSeriesQuery, withGroupPage } from '../http/report-query';
import type { Principal } from '../services/api-key.service';
import { AgentReportsService } from '../services/agent-reports.service';
import { ReportSeriesService } from '../services/report-series.service';
import {
  DEFAULT_RETRY_WASTE_GROUPING,
  RETRY_WASTE_GROUPINGS,
  RetryWasteService,
} from '../services/retry-waste.service';

/** The retry-waste report's and the series' grouping, with the default both take. */
const RETRY_WASTE_GROUP_BY = {
  name: 'groupBy',
  required: false,
  schema: { type: 'string', enum: [...RETRY_WASTE_GROUPINGS], default: DEFAULT_RETRY_WASTE_GROUPING },
} as const;

@ApiTags('reports')
@ApiReadKey()
@Controller('api/v1/reports')
@UseGuards(ApiKeyGuard)
@UseInterceptors(DocumentedQueryOnly, ReadAdmitted)
@RequireScope('read')
export class ReportsController {
  constructor(
    private readonly retryWaste: RetryWasteService,
    private readonly agentReports: AgentReportsService,
    private readonly reportSeries: ReportSeriesService,
  ) {}

  @Get('retry-waste')
  @ApiOperation({ summary: 'Retry waste by category, server or tool (DOMAIN.md §2)' })
  @ApiReportFilters()
  @QueryParameter(RETRY_WASTE_GROUP_BY)
  @ApiGroupPage()
  @ApiOk('RetryWasteReport')
  @ApiErrors(400, 401, 403)
  retryWasteReport(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    return this.retryWaste.report(
      principal.projectId,
      withGroupPage(query, (rest) =>
        parseReportQuery(rest, RETRY_WASTE_GROUPINGS, DEFAULT_RETRY_WASTE_GROUPING),
      ),
    );
  }

  @Get('escalations')
  @ApiOperation({ summary: 'Escalation rates, attribution and avoidable escalations (DOMAIN.md §4)' })
  @ApiReportFilters()
  @ApiOk('EscalationReport')
  @ApiErrors(400, 401, 403)
  escalationsReport(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    return this.agentReports.escalations(principal.projectId, parseReportFilter(query));
  }

  @Get('misclassified-results')
  @ApiOperation({ summary: 'Empty-as-error and failure-as-empty results per server and tool (DOMAIN.md §3)' })
  @ApiReportFilters()
  @ApiGroupPage()
  @ApiOk('MisclassifiedReport')
  @ApiErrors(400, 401, 403)
  misclassifiedResultsReport(
    @CurrentPrincipal() principal: Principal,
    @Query() query: Record<string, unknown>,
  ) {
    return this.agentReports.misclassified(principal.projectId, withGroupPage(query, parseReportFilter));
  }

  @Get('subagent-coverage')
  @ApiOperation({ summary: 'Subagent coverage, propagation completeness, local absorption (DOMAIN.md §4)' })
  @ApiReportFilters()
  @ApiOk('SubagentCoverageReport')
  @ApiErrors(400, 401, 403)
  subagentCoverageReport(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    return this.agentReports.subagentCoverage(principal.projectId, parseReportFilter(query));
  }

  @Get('timeseries')
  @ApiOperation({
    summary: "The reports' headline figures per hour or day",
    description:
      "Each point is the reports over its own bucket: whole UTC hours or days, clipped to the window at its edges. `from` is required; `to` defaults to now; `step` defaults to hour for windows up to 72 hours and day beyond. Wasted retries are broken down as the retry-waste report groups them (`groupBy`): the `groupLimit` groups with the most wasted retries over the window (`keptGroups`), the others folded into each point's `foldedWastedRetries` and `foldedWastedMs` (`foldedGroups` says how many).",
  })
  @ApiReportFilters({ fromRequired: true })
  @QueryParameter({ name: 'step', required: false, enum: ['hour', 'day'] })
  @QueryParameter(RETRY_WASTE_GROUP_BY)
  @QueryParameter({
    name: 'groupLimit',
    required: false,
    description:
      'Groups of the breakdown to keep: those with the most wasted retries over the window, ties by key; the others are folded.',
    schema: { type: 'integer', minimum: 1, maximum: MAX_SERIES_GROUPS, default: DEFAULT_SERIES_GROUPS },
  })
  @ApiOk('ReportSeries')
  @ApiErrors(400, 401, 403)
  timeseries(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    return this.reportSeries.series(
      principal.projectId,
      parseSeriesQuery(query, RETRY_WASTE_GROUPINGS, DEFAULT_RETRY_WASTE_GROUPING),
    );
  }
}
