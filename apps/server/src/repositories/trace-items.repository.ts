import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { DATABASE, type Database } from '../database/database';
import type { DB } from '../database/schema';
import { inTraces, type TraceRef } from './trace-ref';

const ids = {
  traceId: sql<string>`encode(trace_id, 'hex')`.as('traceId'),
  spanId: sql<string>`encode(span_id, 'hex')`.as('spanId'),
  parentSpanId: sql<string | null>`encode(parent_span_id, 'hex')`.as('parentSpanId'),
};

/**
 * Reads of everything the projection knows of whole traces — tool calls, escalations, subagent reports, agent
 * spans and the edges of other spans — for re-deriving them. Inside the projector's transaction.
 */
@Injectable()
export class TraceItemsRepository {
  private readonly db: Kysely<DB>;

  constructor(@Inject(DATABASE) database: Database) {
    this.db = database.db;
  }

  /** One trace of a project, outside any transaction: what a drill-down reads. */
  loadTrace(projectId: number, traceId: string) {
    return this.load(this.db, [{ projectId, traceId }]);
  }

  async load(db: Kysely<DB>, traces: readonly TraceRef[]) {
    if (traces.length === 0) return { calls: [], escalations: [], reports: [], agents: [], edges: [] };
    const [calls, escalations, reports, agents, edges] = await Promise.all([
      this.calls(db, traces),
      this.escalations(db, traces),
      this.reports(db, traces),
      this.agents(db, traces),
      this.edges(db, traces),
    ]);
    return { calls, escalations, reports, agents, edges };
  }

  private calls(db: Kysely<DB>, traces: readonly TraceRef[]) {
    return db
      .selectFrom('tool_call')
      .select([
        'project_id as projectId',
        ids.traceId,
        ids.spanId,
        ids.parentSpanId,
        sql<string>`start_ns::text`.as('startNs'),
        sql<string>`end_ns::text`.as('endNs'),
        'server_name as serverName',
        'server_version as serverVersion',
        'tool',
        'outcome',
        'category',
        'empty_as_error as emptyAsError',
        'failure_as_empty as failureAsEmpty',
        'customer_explanation as customerExplanation',
        'args_hash as argsHash',
        sql<string | null>`encode(retry_of, 'hex')`.as('retryOf'),
        'retry_after_ms as retryAfterMs',
        'tokens',
        'evidence',
        'sample_text as sampleText',
        'findings',
      ])
      .where(inTraces(traces))
      .execute();
  }

  private escalations(db: Kysely<DB>, traces: readonly TraceRef[]) {
    return db
      .selectFrom('escalation')
      .select([
        'project_id as projectId',
        ids.traceId,
        ids.spanId,
        ids.parentSpanId,
        sql<string>`start_ns::text`.as('startNs'),
        'target',
      ])
      .where(inTraces(traces))
      .execute();
  }

  private reports(db: Kysely<DB>, traces: readonly TraceRef[]) {
    return db
      .selectFrom('subagent_report')
      .select([
        'project_id as projectId',
        ids.traceId,
        ids.spanId,
        ids.parentSpanId,
        sql<string>`(floor(extract(epoch from start_time) * 1000000)::bigint * 1000)::text`.as('startNs'),
        'status',
        'completed',
        'total',
        'category',
        'attempted',
        'alternatives',
        'partial_results as partialResults',
      ])
      .where(inTraces(traces))
      .execute();
  }

  private agents(db: Kysely<DB>, traces: readonly TraceRef[]) {
    return db
      .selectFrom('agent_run')
      .select([
        'project_id as projectId',
        ids.traceId,
        ids.spanId,
        ids.parentSpanId,
        'agent_name as agentName',
        'agent_id as agentId',
        'role',
      ])
      .where(inTraces(traces))
      .execute();
  }

  private edges(db: Kysely<DB>, traces: readonly TraceRef[]) {
    return db
      .selectFrom('span_edge')
      .select(['project_id as projectId', ids.traceId, ids.spanId, ids.parentSpanId])
      .where(inTraces(traces))
      .execute();
  }
}

export type TraceItems = Awaited<ReturnType<TraceItemsRepository['load']>>;
