import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiKeyGuard, CurrentPrincipal, RequireScope } from '../http/api-key.guard';
import { parseReportQuery, parseReportFilter } from '../http/report-query';
import type { Principal } from '../services/api-key.service';
import { AgentReportsService } from '../services/agent-reports.service';
import { RETRY_WASTE_GROUPINGS, RetryWasteService } from '../services/retry-waste.service';

@Controller('api/v1/reports')
@UseGuards(ApiKeyGuard)
@RequireScope('read')
export class ReportsController {
  constructor(
    private readonly retryWaste: RetryWasteService,
    private readonly agentReports: AgentReportsService,
  ) {}

  @Get('retry-waste')
  retryWasteReport(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    return this.retryWaste.report(
      principal.projectId,
      parseReportQuery(query, RETRY_WASTE_GROUPINGS, 'category'),
    );
  }

  @Get('escalations')
  escalationsReport(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    return this.agentReports.escalations(principal.projectId, parseReportFilter(query));
  }

  @Get('misclassified-results')
  misclassifiedResultsReport(
    @CurrentPrincipal() principal: Principal,
    @Query() query: Record<string, unknown>,
  ) {
    return this.agentReports.misclassified(principal.projectId, parseReportFilter(query));
  }

  @Get('subagent-coverage')
  subagentCoverageReport(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    return this.agentReports.subagentCoverage(principal.projectId, parseReportFilter(query));
  }
}
