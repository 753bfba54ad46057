import { Injectable } from '@nestjs/common';
import {
  boundSeriesGroups,
  RULES_VERSION,
  SERIES_CALL_MEASURES,
  seriesPointFromSums,
  type RetryWasteGroupBy,
} from '@errata/domain';
import type { SeriesQuery } from '../http/report-query';
import { RollupQueryRepository } from '../repositories/rollup-query.repository';
import { seriesBuckets } from '../rollups/window-slices';

/** The call dimensions each retry-waste grouping keys its groups by. */
const GROUP_DIMENSIONS: Record<RetryWasteGroupBy, readonly string[]> = {
  category: ['category'],
  server: ['server'],
  tool: ['server', 'tool'],
};

/** The reports' headline figures per hour or day, for the dashboard's charts; each point sums its own window. */
@Injectable()
export class ReportSeriesService {
  constructor(private readonly rollups: RollupQueryRepository) {}

  async series(projectId: number, query: SeriesQuery<RetryWasteGroupBy>) {
    const buckets = seriesBuckets(query.from, query.to, query.step);
    const sums = await this.rollups.seriesSums(
      { projectId, ...query },
      buckets,
      query.step,
      SERIES_CALL_MEASURES,
      GROUP_DIMENSIONS[query.groupBy],
    );
    const { keptGroups, foldedGroups, points } = boundSeriesGroups(
      sums.map(({ bucket, calls, reports }) => seriesPointFromSums(bucket, calls, reports, query.groupBy)),
      query.groupLimit,
    );
    return {
      rulesVersion: RULES_VERSION,
      from: query.from.toISOString(),
      to: query.to.toISOString(),
      step: query.step,
      groupBy: query.groupBy,
      groupLimit: query.groupLimit,
      keptGroups,
      foldedGroups,
      points,
    };
  }
}
