import { Inject, Injectable } from '@nestjs/common';
import {
  resolveRuns,
  retryWasteReport,
  traceRunId,
  type AgentRole,
  type CallFact,
  type Outcome,
  type RetryCategory,
  type RetryWasteGroupBy,
} from '@errata/domain';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { ReportQuery } from '../http/report-query';
import { ToolCallQueryRepository } from '../repositories/tool-call-query.repository';

export const RETRY_WASTE_GROUPINGS: readonly RetryWasteGroupBy[] = ['category', 'server', 'tool'];

/** DOMAIN.md §8 `GET /reports/retry-waste`: read-model rows in, the pure report out. */
@Injectable()
export class RetryWasteService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly toolCalls: ToolCallQueryRepository,
  ) {}

  async report(projectId: number, query: ReportQuery<RetryWasteGroupBy>) {
    const filter = { projectId, from: query.from, to: query.to, server: query.server, tool: query.tool };
    const [calls, nodes] = await Promise.all([
      this.toolCalls.listToolCalls(filter),
      this.toolCalls.listRunNodes(filter),
    ]);
    const runs = resolveRuns([
      ...calls.map((call) => ({
        traceId: call.traceId,
        spanId: call.spanId,
        parentSpanId: call.parentSpanId,
      })),
      ...nodes.edges,
      ...nodes.agents.map((agent) => ({
        traceId: agent.traceId,
        spanId: agent.spanId,
        parentSpanId: agent.parentSpanId,
        agent: { name: agent.agentName, id: agent.agentId, role: agent.role as AgentRole | null },
      })),
    ]);
    const facts = calls.flatMap((call): CallFact[] => {
      const run = runs.get(call.spanId);
      if (query.agent !== null && run?.agentName !== query.agent && run?.agentId !== query.agent) return [];
      return [
        {
          key: call.spanId,
          traceId: call.traceId,
          runId: run?.runId ?? traceRunId(call.traceId),
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
        },
      ];
    });
    return retryWasteReport(facts, { groupBy: query.groupBy, windowMs: this.config.retryWindowMs });
  }
}
