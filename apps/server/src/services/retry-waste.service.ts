import { Injectable } from '@nestjs/common';
import { RETRY_WASTE_MEASURES, retryWasteFromSums, type RetryWasteGroupBy } from '@errata/domain';
import type { ReportQuery } from '../http/report-query';
import { RollupQueryRepository } from '../repositories/rollup-query.repository';

export const RETRY_WASTE_GROUPINGS: readonly RetryWasteGroupBy[] = ['category', 'server', 'tool'];

/** DOMAIN.md §8 `GET /reports/retry-waste`: the rollups summed over the window, shaped by @errata/domain. */
@Injectable()
export class RetryWasteService {
  constructor(private readonly rollups: RollupQueryRepository) {}

  async report(projectId: number, query: ReportQuery<RetryWasteGroupBy>) {
    return retryWasteFromSums(
      await this.rollups.callSums({ projectId, ...query }, RETRY_WASTE_MEASURES),
      query.groupBy,
    );
  }
}
