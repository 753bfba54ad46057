import { Injectable } from '@nestjs/common';
import {
  RETRY_WASTE_MEASURES,
  RETRY_WASTE_SAMPLES,
  retryWasteFromSums,
  retryWasteSamples,
  wastedRetryGroups,
  type RetryWasteGroupBy,
} from '@errata/domain';
import type { ReportQuery } from '../http/report-query';
import { RollupQueryRepository } from '../repositories/rollup-query.repository';

export const RETRY_WASTE_GROUPINGS: readonly RetryWasteGroupBy[] = ['category', 'server', 'tool'];

/**
 * DOMAIN.md §8 `GET /reports/retry-waste`: the rollups summed over the window, shaped by @errata/domain, with each
 * group's latest wasted retries as samples.
 */
@Injectable()
export class RetryWasteService {
  constructor(private readonly rollups: RollupQueryRepository) {}

  async report(projectId: number, query: ReportQuery<RetryWasteGroupBy>) {
    const filter = { projectId, ...query };
    const rows = await this.rollups.callSums(filter, RETRY_WASTE_MEASURES);
    const wasted = await this.rollups.latestWastedRetries(
      filter,
      query.groupBy,
      wastedRetryGroups(rows, query.groupBy),
      RETRY_WASTE_SAMPLES,
    );
    return retryWasteFromSums(rows, query.groupBy, retryWasteSamples(wasted, query.groupBy));
  }
}
