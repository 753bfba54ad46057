import { Injectable } from '@nestjs/common';
import {
  resolveRuns,
  traceRunId,
  type AgentRole,
  type CallFinding,
  type EscalationFact,
  type FindingCall,
  type FindingReportFact,
  type Outcome,
  type RetryCategory,
  type RunRef,
  type SubagentStatus,
} from '@errata/domain';
import type { ReportFilter } from '../http/report-query';
import { ReportQueryRepository } from '../repositories/report-query.repository';

/** What the pure reports of @errata/domain read, for one project, window and filter. */
export interface ReportFacts {
  /** Tool calls in the window matching server / tool / agent. */
  readonly calls: readonly FindingCall[];
  /** Escalations in the window (of runs of the agent, when filtered). */
  readonly escalations: readonly EscalationFact[];
  /** Subagent reports in the window (of runs of the agent, when filtered). */
  readonly reports: readonly FindingReportFact[];
  readonly subagentRuns: ReadonlySet<string>;
  /** Tool-call span id → the agent runs started under that call. */
  readonly delegatedRuns: ReadonlyMap<string, readonly string[]>;
}

/** The record kinds a report reads besides tool calls; what it does not read is not loaded. */
export interface ReportNeeds {
  readonly escalations?: boolean;
  readonly subagentReports?: boolean;
}

const matchesAgent = (run: RunRef | undefined, agent: string | null): boolean =>
  agent === null || run?.agentName === agent || run?.agentId === agent;

/**
 * Loads the read-model rows a report needs and resolves every span's agent run (DOMAIN.md §5). The server and
 * tool filters select tool calls; escalations and subagent reports are selected by window and agent only.
 */
@Injectable()
export class ReportFactsService {
  constructor(private readonly readModels: ReportQueryRepository) {}

  async load(projectId: number, query: ReportFilter, needs: ReportNeeds = {}): Promise<ReportFacts> {
    const window = { projectId, from: query.from, to: query.to };
    const [callRows, escalationRows, reportRows] = await Promise.all([
      this.readModels.listToolCalls({ ...window, server: query.server, tool: query.tool }),
      needs.escalations === true ? this.readModels.listEscalations(window) : [],
      needs.subagentReports === true ? this.readModels.listSubagentReports(window) : [],
    ]);
    const traceIds = [
      ...new Set([...callRows, ...escalationRows, ...reportRows].map((row) => row.traceId)),
    ].sort();
    const nodes = await this.readModels.listRunNodes(projectId, traceIds);
    const runs = resolveRuns([
      ...[...callRows, ...escalationRows, ...reportRows].map((row) => ({
        traceId: row.traceId,
        spanId: row.spanId,
        parentSpanId: row.parentSpanId,
      })),
      ...nodes.edges,
      ...nodes.agents.map((agent) => ({
        traceId: agent.traceId,
        spanId: agent.spanId,
        parentSpanId: agent.parentSpanId,
        agent: { name: agent.agentName, id: agent.agentId, role: agent.role as AgentRole | null },
      })),
    ]);
    const runIdOf = (row: { spanId: string; traceId: string }) =>
      runs.get(row.spanId)?.runId ?? traceRunId(row.traceId);

    const calls = callRows.flatMap((call): FindingCall[] => {
      if (!matchesAgent(runs.get(call.spanId), query.agent)) return [];
      return [
        {
          key: call.spanId,
          traceId: call.traceId,
          runId: runIdOf(call),
          server: call.serverName,
          tool: call.tool,
          outcome: call.outcome as Outcome,
          category: call.category as RetryCategory | null,
          startNs: BigInt(call.startNs),
          endNs: BigInt(call.endNs),
          argsHash: call.argsHash,
          retryOf: call.retryOf,
          retryAfterMs: call.retryAfterMs,
          tokens: call.tokens,
          failureAsEmpty: call.failureAsEmpty,
          customerExplanation: call.customerExplanation,
          emptyAsError: call.emptyAsError,
          evidence: call.evidence,
          sampleText: call.sampleText,
          serverVersion: call.serverVersion,
          findings: call.findings as CallFinding[],
        },
      ];
    });
    const escalations = escalationRows.flatMap((row): EscalationFact[] =>
      matchesAgent(runs.get(row.spanId), query.agent)
        ? [
            {
              key: row.spanId,
              runId: runIdOf(row),
              target: row.target as EscalationFact['target'],
              startNs: BigInt(row.startNs),
            },
          ]
        : [],
    );
    const reports = reportRows.flatMap((row): FindingReportFact[] =>
      matchesAgent(runs.get(row.spanId), query.agent)
        ? [
            {
              key: row.spanId,
              runId: runIdOf(row),
              status: row.status as SubagentStatus,
              completed: row.completed,
              total: row.total,
              category: row.category,
              attempted: (row.attempted as string[] | null) ?? null,
              alternatives: (row.alternatives as string[] | null) ?? null,
              partialResults: row.partialResults,
              agentName: runs.get(row.spanId)?.agentName ?? null,
              traceId: row.traceId,
              startNs: BigInt(row.startNs),
            },
          ]
        : [],
    );

    const subagentRuns = new Set<string>();
    for (const run of runs.values()) if (run.isSubagent) subagentRuns.add(run.runId);
    const callKeys = new Set(callRows.map((call) => call.spanId));
    const delegatedRuns = new Map<string, string[]>();
    for (const agent of nodes.agents) {
      if (agent.parentSpanId === null || !callKeys.has(agent.parentSpanId)) continue;
      const runId = runs.get(agent.spanId)?.runId;
      if (runId === undefined) continue;
      delegatedRuns.set(agent.parentSpanId, [...(delegatedRuns.get(agent.parentSpanId) ?? []), runId]);
    }
    return { calls, escalations, reports, subagentRuns, delegatedRuns };
  }
}
