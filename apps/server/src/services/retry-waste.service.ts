import { Injectable } from '@nestjs/common';
import {
  RETRY_WASTE_MEASURES,
  RETRY_WASTE_SAMPLES,
  retryWasteFromSums,
  retryWasteSamples,
  wastedRetryGroups,
  type RetryWasteGroupBy,
} from '@errata/domain';
import type { GroupPage, ReportQuery } from '../http/report-query';
import { RollupQueryRepository } from '../repositories/rollup-query.repository';

export const RETRY_WASTE_GROUPINGS: readonly RetryWasteGroupBy[] = ['category', 'server', 'tool'];
/** How retry waste is grouped when `groupBy` is not given (DOMAIN.md §2: "retry waste by category"). */
export const DEFAULT_RETRY_WASTE_GROUPING: RetryWasteGroupBy = 'category';

/**
 * DOMAIN.md §8 `GET /reports/retry-waste`: the rollups summed over the window, shaped by @errata/domain, with each
 * group's latest wasted retries as samples. One page of the groups (`page`), ranked and cut in SQL, with
 * `groupCount` saying how many there are; the totals are over every group.
 */
@Injectable()
export class RetryWasteService {
  constructor(private readonly rollups: RollupQueryRepository) {}

  async report(projectId: number, query: ReportQuery<RetryWasteGroupBy> & { readonly page: GroupPage }) {
    const { page, ...filters } = query;
    const filter = { projectId, ...filters };
    const { rows, totals, groupCount, wasted } = await this.rollups.snapshot(async (reads) => {
      const groupPage = await reads.retryWastePage(
        filter,
        RETRY_WASTE_MEASURES,
        query.groupBy,
        page.limit,
        page.offset,
      );
      const samples = await reads.latestWastedRetries(
        filter,
        query.groupBy,
        wastedRetryGroups(groupPage.rows, query.groupBy),
        RETRY_WASTE_SAMPLES,
      );
      return { ...groupPage, wasted: samples };
    });
    const { groups, ...report } = retryWasteFromSums(
      rows,
      query.groupBy,
      retryWasteSamples(wasted, query.groupBy),
      [totals],
    );
    return { ...report, groupCount, limit: page.limit, offset: page.offset, groups };
  }
}
