import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { DATABASE, type Database } from '../database/database';
import type { DB } from '../database/schema';
import { inTraces, type TraceRef } from './trace-ref';

/** How many traces hinted retries may link into one derivation (see `withRetryLinks`). */
const MAX_LINKED_TRACES = 10_000;

const traceKey = (trace: TraceRef): string => `${trace.projectId}:${trace.traceId}`;

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

  /**
   * One trace of a project with the traces its hinted retries link it to, outside any transaction: what a
   * drill-down derives.
   */
  async loadTrace(projectId: number, traceId: string) {
    return this.load(this.db, await this.withRetryLinks(this.db, [{ projectId, traceId }]));
  }

  /**
   * `traces` and every trace linked to them, transitively, by a hinted retry: a call whose `errata.retry.of` names
   * a call of another trace. A hint always wins over inference (DOMAIN.md §2), so such traces are derived together,
   * whichever of them a batch touches. Beyond MAX_LINKED_TRACES the search stops (a runtime chaining its turns
   * without end); the traces found so far are derived together all the same.
   */
  async withRetryLinks(db: Kysely<DB>, traces: readonly TraceRef[]): Promise<TraceRef[]> {
    const found = new Map(traces.map((trace) => [traceKey(trace), trace]));
    let frontier = [...found.values()];
    while (frontier.length > 0 && found.size < MAX_LINKED_TRACES) {
      const linked = await this.retryLinked(db, frontier);
      frontier = linked.filter((trace) => !found.has(traceKey(trace)));
      for (const trace of frontier) found.set(traceKey(trace), trace);
    }
    return [...found.values()];
  }

  /** The traces of the calls that calls of `traces` retry by hint, and of the calls that retry them by hint. */
  private async retryLinked(db: Kysely<DB>, traces: readonly TraceRef[]): Promise<TraceRef[]> {
    const retried = db
      .selectFrom('tool_call as c')
      .innerJoin('tool_call as t', (join) =>
        join.onRef('t.project_id', '=', 'c.project_id').onRef('t.span_id', '=', 'c.retry_of'),
      )
      .select(['t.project_id as projectId', sql<string>`encode(t.trace_id, 'hex')`.as('traceId')])
      .where(inTraces(traces, 'c'))
      .where('c.retry_of', 'is not', null);
    const retrying = db
      .selectFrom('tool_call as c')
      .innerJoin('tool_call as r', (join) =>
        join.onRef('r.project_id', '=', 'c.project_id').onRef('r.retry_of', '=', 'c.span_id'),
      )
      .select(['r.project_id as projectId', sql<string>`encode(r.trace_id, 'hex')`.as('traceId')])
      .where(inTraces(traces, 'c'));
    return retried.union(retrying).execute();
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
