import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { DATABASE, type Database } from '../database/database';
import type { DB } from '../database/schema';

export interface ToolCallFilter {
  readonly projectId: number;
  readonly from: Date | null;
  readonly to: Date | null;
  readonly server: string | null;
  readonly tool: string | null;
}

/** Reads of the tool-call read model for reports. */
@Injectable()
export class ToolCallQueryRepository {
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
      ])
      .orderBy('start_ns')
      .orderBy('span_id')
      .execute();
  }

  /** Agent spans and kept edges of every trace that has a matching tool call: enough to resolve runs. */
  async listRunNodes(filter: ToolCallFilter) {
    const traces = this.filtered(filter).select('trace_id').distinct();
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
      .where('project_id', '=', filter.projectId)
      .where('trace_id', 'in', traces)
      .execute();
    const edges = await this.db
      .selectFrom('span_edge')
      .select([
        sql<string>`encode(trace_id, 'hex')`.as('traceId'),
        sql<string>`encode(span_id, 'hex')`.as('spanId'),
        sql<string>`encode(parent_span_id, 'hex')`.as('parentSpanId'),
      ])
      .where('project_id', '=', filter.projectId)
      .where('trace_id', 'in', traces)
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
