import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DATABASE, type Database } from '../database/database';
import type { DB } from '../database/schema';
import { inTraces, traceKey, type TraceRef } from './trace-ref';

/** The traces one derivation covers (see `retryLinkedTraces`). */
export interface LinkedTraces {
  /** Derived and written: the traces asked for, then those hinted retries link them to, nearest first. */
  readonly derived: TraceRef[];
  /** Read for the derivation only: one hint beyond `derived` when the cap cut the search; empty otherwise. */
  readonly context: TraceRef[];
}

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

  constructor(
    @Inject(DATABASE) database: Database,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.db = database.db;
  }

  /**
   * One trace of a project with the traces its hinted retries link it to, outside any transaction: what a
   * drill-down derives.
   */
  async loadTrace(projectId: number, traceId: string) {
    const linked = await this.retryLinkedTraces(this.db, [{ projectId, traceId }]);
    return this.load(this.db, [...linked.derived, ...linked.context]);
  }

  /**
   * `traces` and every trace linked to them, transitively, by a hinted retry: a call whose `errata.retry.of` names
   * a call of another trace. A hint always wins over inference (DOMAIN.md §2), so such traces are derived together,
   * whichever of them a batch touches. Most batches link nothing, which one plain query tells; otherwise one
   * recursive query, breadth first: a long chain (a job retrying across runs, each hinting the last attempt) costs
   * one statement, not one per hop. At most `maxLinkedTraces` (ERRATA_MAX_LINKED_TRACES) are added. When that cuts
   * the search, the traces one hint beyond are `context`: read for the derivation, so that the edge's hints still
   * find the calls they name, but not re-derived (their contributions stay as stored).
   */
  async retryLinkedTraces(db: Kysely<DB>, traces: readonly TraceRef[]): Promise<LinkedTraces> {
    const given = new Set(traces.map(traceKey));
    const neighbours = traces.length === 0 ? [] : await this.retryNeighbours(db, traces);
    if (neighbours.every((trace) => given.has(traceKey(trace)))) return { derived: [...traces], context: [] };
    const limit = traces.length + this.config.maxLinkedTraces;
    const derived = await withoutJit(db, (trx) => this.retryClosure(trx, traces, limit));
    if (derived.length < limit) return { derived, context: [] };
    const inDerived = new Set(derived.map(traceKey));
    const beyond = await this.retryNeighbours(db, derived);
    return { derived, context: beyond.filter((trace) => !inDerived.has(traceKey(trace))) };
  }

  /** `traces`, then the traces hinted retries link them to, breadth first, `limit` in all at most. */
  private async retryClosure(
    db: Kysely<DB>,
    traces: readonly TraceRef[],
    limit: number,
  ): Promise<TraceRef[]> {
    const { rows } = await sql<TraceRef>`
      WITH RECURSIVE linked (project_id, trace_id) AS (
        SELECT s.project_id, decode(s.trace_id, 'hex')
          FROM unnest(${traces.map((t) => t.projectId)}::int[], ${traces.map((t) => t.traceId)}::text[])
            AS s (project_id, trace_id)
        UNION
        SELECT hop.project_id, hop.trace_id
          FROM linked
         CROSS JOIN LATERAL (
               SELECT t.project_id, t.trace_id
                 FROM tool_call c
                 JOIN tool_call t ON t.project_id = c.project_id AND t.span_id = c.retry_of
                WHERE c.project_id = linked.project_id AND c.trace_id = linked.trace_id AND c.retry_of IS NOT NULL
                  AND ${namesNoOwnCall('c')}
               UNION ALL
               SELECT r.project_id, r.trace_id
                 FROM tool_call c
                 JOIN tool_call r ON r.project_id = c.project_id AND r.retry_of = c.span_id
                WHERE c.project_id = linked.project_id AND c.trace_id = linked.trace_id
                  AND ${namesNoOwnCall('r')}
               ) AS hop
      )
      SELECT project_id AS "projectId", encode(trace_id, 'hex') AS "traceId" FROM linked LIMIT ${limit}`.execute(
      db,
    );
    return rows;
  }

  /** The traces of the calls that calls of `traces` retry by hint, and of the calls that retry them by hint. */
  private async retryNeighbours(db: Kysely<DB>, traces: readonly TraceRef[]): Promise<TraceRef[]> {
    const retried = db
      .selectFrom('tool_call as c')
      .innerJoin('tool_call as t', (join) =>
        join.onRef('t.project_id', '=', 'c.project_id').onRef('t.span_id', '=', 'c.retry_of'),
      )
      .select(['t.project_id as projectId', sql<string>`encode(t.trace_id, 'hex')`.as('traceId')])
      .where(inTraces(traces, 'c'))
      .where('c.retry_of', 'is not', null)
      .where(namesNoOwnCall('c'));
    const retrying = db
      .selectFrom('tool_call as c')
      .innerJoin('tool_call as r', (join) =>
        join.onRef('r.project_id', '=', 'c.project_id').onRef('r.retry_of', '=', 'c.span_id'),
      )
      .select(['r.project_id as projectId', sql<string>`encode(r.trace_id, 'hex')`.as('traceId')])
      .where(inTraces(traces, 'c'))
      .where(namesNoOwnCall('r'));
    return retried.union(retrying).execute();
  }

  /**
   * The raw arguments stored with these calls of one trace (a timeline page's), read from the log (they are shown in
   * the trace's timeline and nowhere else, so no read model carries them); none while the project does not store
   * arguments, also those it kept while it did. By the log's primary key (project, trace, span).
   */
  async storedArguments(
    projectId: number,
    traceId: string,
    spanIds: readonly string[],
  ): Promise<Map<string, string>> {
    if (spanIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('event')
      .select([ids.spanId, sql<string>`data->>'arguments'`.as('arguments')])
      .where('project_id', '=', projectId)
      .where('trace_id', '=', sql<Buffer>`decode(${traceId}, 'hex')`)
      .where(
        'span_id',
        '=',
        sql<Buffer>`ANY(ARRAY(SELECT decode(id, 'hex') FROM unnest(${[...spanIds]}::text[]) AS id))`,
      )
      .where('type', '=', 'ToolCallObserved')
      .where(sql<boolean>`data->>'arguments' IS NOT NULL`)
      .where(sql<boolean>`EXISTS (SELECT 1 FROM project p WHERE p.id = ${projectId} AND p.store_arguments)`)
      .execute();
    return new Map(rows.map((row) => [row.spanId, row.arguments]));
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
        'category_source as categorySource',
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
        'server_side as serverSide',
        'retryable',
        'retryable_source as retryableSource',
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

/**
 * SQL: the hint of the call aliased `alias` names no call of its own trace, so it may name one of another
 * (`linkedTraceGroups` links a trace to another only then; traces that reuse span ids are not read together).
 */
const namesNoOwnCall = (alias: string) => sql<boolean>`NOT EXISTS (
  SELECT 1 FROM tool_call own
   WHERE own.project_id = ${sql.ref(`${alias}.project_id`)} AND own.trace_id = ${sql.ref(`${alias}.trace_id`)}
     AND own.span_id = ${sql.ref(`${alias}.retry_of`)})`;

/**
 * Runs `query` with PostgreSQL's JIT compilation off. The planner prices a recursive query by a guessed depth, far
 * above jit_above_cost, and compiling it took 300 ms where running it took 40 (2,000 traces; EXPLAIN ANALYZE).
 * `set_config(…, true)` lasts until the end of the transaction: outside one, a transaction of its own.
 */
async function withoutJit<T>(db: Kysely<DB>, query: (db: Kysely<DB>) => Promise<T>): Promise<T> {
  if (!db.isTransaction) return db.transaction().execute((trx) => withoutJit(trx, query));
  const { rows } = await sql<{ jit: string }>`SELECT current_setting('jit') AS jit`.execute(db);
  await sql`SELECT set_config('jit', 'off', true)`.execute(db);
  // A failed query aborts the transaction, and the setting with it: only a result needs the setting back.
  const result = await query(db);
  await sql`SELECT set_config('jit', ${rows[0]?.jit ?? 'on'}, true)`.execute(db);
  return result;
}
