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

/** The reports' headline figures per hour or day, for the dashboard's charts; each point sums its own window. */
@Injectable()
export class ReportSeriesService {
  constructor(private readonly rollups: RollupQueryRepository) {}

  async series(projectId: number, query: SeriesQuery<RetryWasteGroupBy>) {
    const buckets = seriesBuckets(query.from, query.to, query.step);
    // The read keeps only the top `groupLimit` groups' rows; bounding orders them and counts the folded ones.
    const sums = await this.rollups.seriesSums(
      { projectId, ...query },
      buckets,
      query.step,
      SERIES_CALL_MEASURES,
      query.groupBy,
      query.groupLimit,
    );
    const { keptGroups, foldedGroups, points } = boundSeriesGroups(
      sums.points.map(({ bucket, calls, folded, reports }) =>
        seriesPointFromSums(bucket, calls, reports, query.groupBy, folded),
      ),
      query.groupLimit,
      sums.foldedGroups,
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
