import { Injectable } from '@nestjs/common';
import {
  COVERAGE_CALL_MEASURES,
  ESCALATION_MEASURES,
  MISCLASSIFIED_MEASURES,
  escalationsFromSums,
  misclassificationSamples,
  misclassifiedFromSums,
  offenceKey,
  subagentCoverageFromSums,
  type CallSums,
} from '@errata/domain';
import type { GroupPage, ReportFilter } from '../http/report-query';
import { RollupQueryRepository, type OffenceGroup } from '../repositories/rollup-query.repository';

/** Samples per misclassified tool and direction. */
const MISCLASSIFICATION_SAMPLES = 3;

/**
 * DOMAIN.md §8 `GET /reports/escalations`, `/reports/misclassified-results` and `/reports/subagent-coverage`:
 * the rollups summed over the window, shaped by @errata/domain.
 */
@Injectable()
export class AgentReportsService {
  constructor(private readonly rollups: RollupQueryRepository) {}

  async escalations(projectId: number, query: ReportFilter) {
    return escalationsFromSums(await this.rollups.callSums({ projectId, ...query }, ESCALATION_MEASURES));
  }

  /** One page of the groups (`page`), ranked and cut in SQL, with `groupCount`; the totals are over every group. */
  async misclassified(projectId: number, query: ReportFilter & { readonly page: GroupPage }) {
    const { page, ...filters } = query;
    const filter = { projectId, ...filters };
    const { rows, totals, groupCount, timelines } = await this.rollups.snapshot(async (reads) => {
      const groupPage = await reads.misclassifiedPage(
        filter,
        MISCLASSIFIED_MEASURES,
        page.limit,
        page.offset,
      );
      const samples = await reads.offenceTimelines(
        filter,
        misclassifiedOffenceGroups(groupPage.rows),
        MISCLASSIFICATION_SAMPLES,
      );
      return { ...groupPage, timelines: samples };
    });
    const { groups: shaped, ...report } = misclassifiedFromSums(
      rows,
      (server, tool) =>
        misclassificationSamples(
          (['empty-as-error', 'failure-as-empty'] as const).flatMap(
            (rule) => timelines.get(offenceKey(server, tool, rule))?.earliest ?? [],
          ),
        ),
      [totals],
    );
    return { ...report, groupCount, limit: page.limit, offset: page.offset, groups: shaped };
  }

  async subagentCoverage(projectId: number, query: ReportFilter) {
    const filter = { projectId, ...query };
    const { reports, calls } = await this.rollups.snapshot(async (reads) => ({
      reports: await reads.reportSums(filter),
      calls: await reads.callSums(filter, COVERAGE_CALL_MEASURES),
    }));
    return subagentCoverageFromSums(reports, calls);
  }
}

/** The misclassification findings of a page's tools, whose earliest offences are the groups' samples. */
function misclassifiedOffenceGroups(rows: readonly CallSums[]): OffenceGroup[] {
  const groups = new Map<string, OffenceGroup>();
  for (const row of rows) {
    if (row.tool === null) continue;
    if (row.sums.empty_as_error > 0n) {
      const group = { server: row.server, tool: row.tool, rule: 'empty-as-error' } as const;
      groups.set(offenceKey(group.server, group.tool, group.rule), group);
    }
    if (row.sums.failure_as_empty > 0n) {
      const group = { server: row.server, tool: row.tool, rule: 'failure-as-empty' } as const;
      groups.set(offenceKey(group.server, group.tool, group.rule), group);
    }
  }
  return [...groups.values()];
}
