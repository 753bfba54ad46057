import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { findingsReport, serverScorecard, type Finding, type FindingRule } from '@errata/domain';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { ReportFilter } from '../http/report-query';
import { ReportFactsService } from './report-facts.service';

export interface FindingsPage {
  readonly rule: FindingRule | null;
  readonly limit: number;
  readonly offset: number;
}

/** DOMAIN.md §7/§8 `GET /findings`, `GET /findings/{id}` and `GET /servers`, derived from the read models. */
@Injectable()
export class FindingsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly facts: ReportFactsService,
  ) {}

  async list(projectId: number, filter: ReportFilter, page: FindingsPage) {
    const { rulesVersion, findings } = await this.all(projectId, filter);
    const selected = page.rule === null ? findings : findings.filter((finding) => finding.rule === page.rule);
    return {
      rulesVersion,
      total: selected.length,
      limit: page.limit,
      offset: page.offset,
      findings: selected
        .slice(page.offset, page.offset + page.limit)
        .map(({ samples: _samples, ...finding }) => finding),
    };
  }

  /** One finding with its samples; 404 when the project has none with this id in the window. */
  async get(projectId: number, id: string, filter: ReportFilter): Promise<Finding> {
    const finding = (await this.all(projectId, filter)).findings.find((candidate) => candidate.id === id);
    if (finding === undefined) throw new NotFoundException(`no finding ${id}`);
    return finding;
  }

  /** DOMAIN.md §8 `GET /servers`: a scorecard per server and tool, graded from the calls' findings. */
  async servers(projectId: number, filter: ReportFilter) {
    const { calls } = await this.facts.load(projectId, filter);
    return serverScorecard(calls);
  }

  private async all(projectId: number, filter: ReportFilter) {
    const { calls, reports, escalations, delegatedRuns } = await this.facts.load(projectId, filter, {
      escalations: true,
      subagentReports: true,
    });
    return findingsReport(calls, reports, escalations, {
      windowMs: this.config.retryWindowMs,
      delegatedRuns,
    });
  }
}
