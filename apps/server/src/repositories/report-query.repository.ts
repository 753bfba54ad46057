import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { DATABASE, type Database } from '../database/database';
import type { DB } from '../database/schema';

export interface WindowFilter {
  readonly projectId: number;
  readonly from: Date | null;
  readonly to: Date | null;
}

export interface ToolCallFilter {
  readonly projectId: number;
  readonly from: Date | null;
  readonly to: Date | null;
  readonly server: string | null;
  readonly tool: string | null;
}

/** Reads of the report read models (tool calls, escalations, subagent reports, runs). */
@Injectable()
export class ReportQueryRepository {
  private readonly db: Kysely<DB>;

  constructor(@Inject(DATABASE) database: Database) {
    this.db = database.db;
  }

  listToolCalls(filter: ToolCallFilter) {
    return this.filtered(filter)
      .select([
        sql<string>`encode(trace_id, 'hex')`.as('traceId'),
        sql<string>`encode(span_id, 'hex')`.as('spanId'),
        sql<string | null>`encode(parent_span_id, 'hex')`.as('parentSpanId'),
        sql<string>`start_ns::text`.as('startNs'),
        sql<string>`end_ns::text`.as('endNs'),
        'server_name as serverName',
        'tool',
        'outcome',
        'category',
        'empty_as_error as emptyAsError',
        'args_hash as argsHash',
        sql<string | null>`encode(retry_of, 'hex')`.as('retryOf'),
        'retry_after_ms as retryAfterMs',
        'tokens',
        'rules_version as rulesVersion',
        'failure_as_empty as failureAsEmpty',
        'customer_explanation as customerExplanation',
        'evidence',
        'sample_text as sampleText',
        'server_version as serverVersion',
        'findings',
      ])
      .orderBy('start_ns')
      .orderBy('span_id')
      .execute();
  }

  /** Escalations that started in the window. */
  listEscalations(filter: WindowFilter) {
    return this.db
      .selectFrom('escalation')
      .select([
        sql<string>`encode(trace_id, 'hex')`.as('traceId'),
        sql<string>`encode(span_id, 'hex')`.as('spanId'),
        sql<string | null>`encode(parent_span_id, 'hex')`.as('parentSpanId'),
        sql<string>`start_ns::text`.as('startNs'),
        'target',
      ])
      .where('project_id', '=', filter.projectId)
      .$if(filter.from !== null, (qb) => qb.where('start_time', '>=', filter.from!))
      .$if(filter.to !== null, (qb) => qb.where('start_time', '<', filter.to!))
      .orderBy('start_ns')
      .orderBy('span_id')
      .execute();
  }

  /** Subagent reports made in the window. */
  listSubagentReports(filter: WindowFilter) {
    return this.db
      .selectFrom('subagent_report')
      .select([
        sql<string>`encode(trace_id, 'hex')`.as('traceId'),
        sql<string>`encode(span_id, 'hex')`.as('spanId'),
        sql<string | null>`encode(parent_span_id, 'hex')`.as('parentSpanId'),
        sql<string>`(floor(extract(epoch from start_time) * 1000000)::bigint * 1000)::text`.as('startNs'),
        'status',
        'completed',
        'total',
        'category',
        'attempted',
        'alternatives',
        'partial_results as partialResults',
      ])
      .where('project_id', '=', filter.projectId)
      .$if(filter.from !== null, (qb) => qb.where('start_time', '>=', filter.from!))
      .$if(filter.to !== null, (qb) => qb.where('start_time', '<', filter.to!))
      .orderBy('span_id')
      .execute();
  }

  /** Agent spans and kept edges of these traces (hex ids): enough to resolve runs. */
  async listRunNodes(projectId: number, traceIds: readonly string[]) {
    if (traceIds.length === 0) return { agents: [], edges: [] };
    const traces = sql<Uint8Array>`(SELECT decode(t, 'hex') FROM unnest(${[...traceIds]}::text[]) AS t)`;
    const agents = await this.db
      .selectFrom('agent_run')
      .select([
        sql<string>`encode(trace_id, 'hex')`.as('traceId'),
        sql<string>`encode(span_id, 'hex')`.as('spanId'),
        sql<string | null>`encode(parent_span_id, 'hex')`.as('parentSpanId'),
        'agent_name as agentName',
        'agent_id as agentId',
        'role',
      ])
      .where('project_id', '=', projectId)
      .where(sql<boolean>`trace_id IN ${traces}`)
      .execute();
    const edges = await this.db
      .selectFrom('span_edge')
      .select([
        sql<string>`encode(trace_id, 'hex')`.as('traceId'),
        sql<string>`encode(span_id, 'hex')`.as('spanId'),
        sql<string>`encode(parent_span_id, 'hex')`.as('parentSpanId'),
      ])
      .where('project_id', '=', projectId)
      .where(sql<boolean>`trace_id IN ${traces}`)
      .execute();
    return { agents, edges };
  }

  private filtered(filter: ToolCallFilter): SelectQueryBuilder<DB, 'tool_call', object> {
    return this.db
      .selectFrom('tool_call')
      .where('project_id', '=', filter.projectId)
      .$if(filter.from !== null, (qb) => qb.where('start_time', '>=', filter.from!))
      .$if(filter.to !== null, (qb) => qb.where('start_time', '<', filter.to!))
      .$if(filter.server !== null, (qb) => qb.where('server_name', '=', filter.server!))
      .$if(filter.tool !== null, (qb) => qb.where('tool', '=', filter.tool!));
  }
}
