import { Injectable } from '@nestjs/common';
import { RULES_VERSION, SERIES_CALL_MEASURES, seriesPointFromSums } from '@errata/domain';
import type { SeriesQuery } from '../http/report-query';
import { RollupQueryRepository } from '../repositories/rollup-query.repository';
import { seriesBuckets } from '../rollups/window-slices';

/** The reports' headline figures per hour or day, for the dashboard's charts; each point sums its own window. */
@Injectable()
export class ReportSeriesService {
  constructor(private readonly rollups: RollupQueryRepository) {}

  async series(projectId: number, query: SeriesQuery) {
    const buckets = seriesBuckets(query.from, query.to, query.step);
    const sums = await this.rollups.seriesSums(
      { projectId, ...query },
      buckets,
      query.step,
      SERIES_CALL_MEASURES,
    );
    return {
      rulesVersion: RULES_VERSION,
      from: query.from.toISOString(),
      to: query.to.toISOString(),
      step: query.step,
      points: sums.map(({ bucket, calls, reports }) => seriesPointFromSums(bucket, calls, reports)),
    };
  }
}
