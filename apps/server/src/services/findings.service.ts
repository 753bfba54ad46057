import { Injectable } from '@nestjs/common';
import {
  FINDINGS_CALL_MEASURES,
  declaredErrorOfCall,
  findingId,
  findingsFromSums,
  scorecardOf,
  suggestContract,
  type CallSums,
  type Category,
  type Finding,
  type FindingRule,
  type FindingSums,
  type SuggestedContract,
} from '@errata/domain';
import type { GroupPage, NamesQuery, ReportFilter } from '../http/report-query';
import { DeliveryRepository } from '../repositories/delivery.repository';
import { EventRepository } from '../repositories/event.repository';
import { FixRepository } from '../repositories/fix.repository';
import {
  RollupQueryRepository,
  type OffenceGroup,
  type RollupFilter,
} from '../repositories/rollup-query.repository';
import { FindingNotFound } from './finding-not-found';

/** `GET /servers`: the filters, the page of servers, and the tools listed per server at most. */
export type ScorecardQuery = ReportFilter & {
  readonly page: GroupPage;
  readonly toolLimit: number;
  readonly toolOffset: number;
};

export interface FindingsPage {
  readonly rule: FindingRule | null;
  readonly limit: number;
  readonly offset: number;
}

/** A finding with its samples and the contract Errata suggests instead: what a fix's webhook shows of it. */
export type FindingWithContract = Finding & { readonly suggestedContract: SuggestedContract };

/** Samples a finding shows. */
const FINDING_SAMPLES = 3;

/** DOMAIN.md §7/§8 `GET /findings`, `GET /findings/{id}` and `GET /servers`, from the rollups. */
@Injectable()
export class FindingsService {
  constructor(
    private readonly rollups: RollupQueryRepository,
    private readonly fixes: FixRepository,
    private readonly deliveries: DeliveryRepository,
    private readonly events: EventRepository,
  ) {}

  async list(projectId: number, filter: ReportFilter, page: FindingsPage) {
    // The list shows no samples: one earliest offence (first seen) is enough.
    const { report } = await this.findings({ projectId, ...filter }, () => true, 1);
    const { rulesVersion, findings } = report;
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

  /**
   * One finding with its samples, the contract Errata suggests instead (DOMAIN.md §7), and where its fix stands:
   * the lifecycle state and its webhook deliveries. 404 when the project has none with this id in the window.
   */
  async get(projectId: number, id: string, filter: ReportFilter) {
    const finding = (await this.withContracts(projectId, [id], filter)).get(id);
    if (finding === undefined) throw new FindingNotFound(id);
    const [fix, deliveries] = await Promise.all([
      this.fixes.current(projectId, id),
      this.deliveries.findingStatus(projectId, id),
    ]);
    return { ...finding, fix, deliveries };
  }

  /**
   * The findings of `ids` the project has in the window (by id; one it lacks is left out), each with its samples and
   * the contract Errata suggests instead (DOMAIN.md §7): what a fix's webhook shows. The same reads for one finding
   * as for thousands (a fix round's first one after as many new findings), from one snapshot of the rollups.
   */
  async withContracts(
    projectId: number,
    ids: readonly string[],
    filter: ReportFilter,
  ): Promise<Map<string, FindingWithContract>> {
    const wanted = new Set(ids);
    const { report, calls } = await this.findings(
      { projectId, ...filter },
      (row) => wanted.has(findingId(row.server, row.tool, row.rule)),
      FINDING_SAMPLES,
    );
    const found = report.findings.filter((finding) => wanted.has(finding.id));
    const declarations = await this.events.toolCallDeclarations(
      projectId,
      found.map((finding) => finding.samples),
    );
    const toolCalls = new Map<string, CallSums[]>();
    for (const row of calls) {
      const tool = JSON.stringify([row.server, row.tool]);
      const rows = toolCalls.get(tool);
      if (rows === undefined) toolCalls.set(tool, [row]);
      else rows.push(row);
    }
    return new Map(
      found.map((finding, index) => {
        const tool = JSON.stringify([finding.server, finding.tool]);
        const suggestedContract = suggestContract(finding, {
          dominantCategory: dominantFailureCategory(toolCalls.get(tool) ?? []),
          sampledDeclarations: declarations[index]!.map(declaredErrorOfCall),
        });
        return [finding.id, { ...finding, suggestedContract }];
      }),
    );
  }

  /** Whether the project has a finding with this id in all of its history (one an acknowledgement may name). */
  async exists(projectId: number, id: string): Promise<boolean> {
    const { report } = await this.findings(
      { projectId, from: null, to: null, server: null, tool: null, agent: null },
      (row) => findingId(row.server, row.tool, row.rule) === id,
      1,
    );
    return report.findings.some((finding) => finding.id === id);
  }

  /**
   * `GET /names`: the server and tool names of the window's calls and the names of its agents, for the dashboard's
   * filters: names only, listed and counted in SQL, where the scorecard ranked and graded every tool of every server
   * to the same end.
   */
  async names(projectId: number, query: NamesQuery) {
    const { limit, search, ...window } = query;
    const names = await this.rollups.callNames(
      { projectId, ...window, tool: null, agent: null },
      limit,
      search,
    );
    return { limit, search, ...names };
  }

  /**
   * DOMAIN.md §8 `GET /servers`: a scorecard per server and tool, graded from the calls' findings. One page of the
   * servers (`page`), cut in SQL, with `groupCount` saying how many there are; each with its first `toolLimit` tools
   * (most violating calls first) and `toolCount`, cut in SQL too. Only the listed tools' findings are read.
   */
  async servers(projectId: number, query: ScorecardQuery) {
    const { page, toolLimit, toolOffset, ...filter } = query;
    const rollup = { projectId, ...filter };
    const { groupCount, totals, tools, findings } = await this.rollups.snapshot(async (reads) => {
      const scorecard = await reads.scorecardPage(rollup, page, { limit: toolLimit, offset: toolOffset });
      const serverTools = scorecard.tools.map((row) => ({ server: row.server, tool: row.tool! }));
      const sums = serverTools.length === 0 ? [] : await reads.findingSums({ ...rollup, serverTools });
      return { ...scorecard, findings: sums };
    });
    const { servers: scores, ...scorecard } = scorecardOf(totals, tools, findings, toolLimit);
    return {
      ...scorecard,
      groupCount,
      limit: page.limit,
      offset: page.offset,
      toolLimit,
      toolOffset,
      servers: scores,
    };
  }

  /** Every finding (one sample each): the ones the fix lifecycle may suggest fixes for. */
  async everything(projectId: number, filter: ReportFilter) {
    return this.findings({ projectId, ...filter }, () => true, 1);
  }

  /**
   * Per finding of `since` (its index there → its traffic), the calls of its tool and offences of its rule per server
   * version, among the calls that started at its `from` or later: the traffic that verifies a fix, or shows it
   * regressed. One snapshot for all of them.
   */
  versionTraffic(projectId: number, since: readonly (OffenceGroup & { readonly from: Date })[]) {
    return this.rollups.versionTrafficSince(projectId, since);
  }

  private async findings(filter: RollupFilter, wanted: (row: FindingSums) => boolean, samples: number) {
    const { calls, findings, reports, timelines } = await this.rollups.snapshot(async (reads) => {
      const callSums = await reads.callSums(filter, FINDINGS_CALL_MEASURES);
      const findingSums = (await reads.findingSums(filter)).filter(wanted);
      const reportSums = await reads.reportSums(filter);
      const groups = new Map<string, OffenceGroup>();
      for (const row of findingSums) {
        if (row.sums.offences === 0n) continue;
        groups.set(findingId(row.server, row.tool, row.rule), {
          server: row.server,
          tool: row.tool,
          rule: row.rule,
        });
      }
      const offences = await reads.offenceTimelines(filter, [...groups.values()], samples);
      return { calls: callSums, findings: findingSums, reports: reportSums, timelines: offences };
    });
    return { report: findingsFromSums({ calls, findings, reports }, timelines), calls, findings };
  }
}

/** The failure category a tool's failures have most often (declared or inferred), unknown and empty aside. */
function dominantFailureCategory(rows: readonly CallSums[]): Category | null {
  const failures = new Map<Category, bigint>();
  for (const row of rows) {
    const category = row.category as Category | 'empty' | null;
    if (category === null || category === 'empty' || category === 'unknown') continue;
    failures.set(category, (failures.get(category) ?? 0n) + row.sums.failures);
  }
  let dominant: Category | null = null;
  for (const [category, count] of [...failures].sort(([a], [b]) => a.localeCompare(b))) {
    if (count > 0n && (dominant === null || count > failures.get(dominant)!)) dominant = category;
  }
  return dominant;
}
