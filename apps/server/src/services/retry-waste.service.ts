import { Inject, Injectable } from '@nestjs/common';
import { retryWasteReport, type RetryWasteGroupBy } from '@errata/domain';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { ReportQuery } from '../http/report-query';
import { ReportFactsService } from './report-facts.service';

export const RETRY_WASTE_GROUPINGS: readonly RetryWasteGroupBy[] = ['category', 'server', 'tool'];

/** DOMAIN.md §8 `GET /reports/retry-waste`: read-model rows in, the pure report out. */
@Injectable()
export class RetryWasteService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly facts: ReportFactsService,
  ) {}

  async report(projectId: number, query: ReportQuery<RetryWasteGroupBy>) {
    const { calls } = await this.facts.load(projectId, query);
    return retryWasteReport(calls, { groupBy: query.groupBy, windowMs: this.config.retryWindowMs });
  }
}
