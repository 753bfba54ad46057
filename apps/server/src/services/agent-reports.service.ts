import { Inject, Injectable } from '@nestjs/common';
import { escalationReport, misclassifiedReport, subagentCoverageReport } from '@errata/domain';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { ReportFilter } from '../http/report-query';
import { ReportFactsService } from './report-facts.service';

/**
 * DOMAIN.md §8 `GET /reports/escalations`, `/reports/misclassified-results` and `/reports/subagent-coverage`:
 * read-model rows in, the pure reports of @errata/domain out.
 */
@Injectable()
export class AgentReportsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly facts: ReportFactsService,
  ) {}

  async escalations(projectId: number, query: ReportFilter) {
    const { calls, escalations } = await this.facts.load(projectId, query, { escalations: true });
    const { attributions: _attributions, ...report } = escalationReport(calls, escalations, {
      windowMs: this.config.retryWindowMs,
    });
    return report;
  }

  async misclassified(projectId: number, query: ReportFilter) {
    const { calls, escalations, delegatedRuns } = await this.facts.load(projectId, query, {
      escalations: true,
    });
    return misclassifiedReport(calls, escalations, { windowMs: this.config.retryWindowMs, delegatedRuns });
  }

  async subagentCoverage(projectId: number, query: ReportFilter) {
    const { calls, reports, subagentRuns } = await this.facts.load(projectId, query, {
      subagentReports: true,
    });
    return subagentCoverageReport(reports, calls, subagentRuns, { windowMs: this.config.retryWindowMs });
  }
}
