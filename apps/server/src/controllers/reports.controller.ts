import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiKeyGuard, CurrentPrincipal, RequireScope } from '../http/api-key.guard';
import { parseReportQuery } from '../http/report-query';
import type { Principal } from '../services/api-key.service';
import { RETRY_WASTE_GROUPINGS, RetryWasteService } from '../services/retry-waste.service';

@Controller('api/v1/reports')
@UseGuards(ApiKeyGuard)
@RequireScope('read')
export class ReportsController {
  constructor(private readonly retryWaste: RetryWasteService) {}

  @Get('retry-waste')
  retryWasteReport(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    return this.retryWaste.report(
      principal.projectId,
      parseReportQuery(query, RETRY_WASTE_GROUPINGS, 'category'),
    );
  }
}
