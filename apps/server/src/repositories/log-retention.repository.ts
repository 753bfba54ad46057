import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely, type Transaction } from 'kysely';
import { DATABASE, type Database } from '../database/database';
import type { DB } from '../database/schema';
import { inTraces, type TraceRef } from './trace-ref';

/** A trace whose every span started before a cutoff, and what of it the log holds. */
export interface EndedTrace extends TraceRef {
  readonly events: number;
  readonly edges: number;
}

/**
 * Removing old traces from the event log (`events prune`). Whole traces only: a trace cut in two would be derived
 * from half its spans.
 */
@Injectable()
export class LogRetentionRepository {
  private readonly db: Kysely<DB>;

  constructor(@Inject(DATABASE) database: Database) {
    this.db = database.db;
  }

  /** The traces (of one project, or of all) whose every event and span edge started before `cutoff`. */
  async tracesEndedBefore(cutoff: Date, projectId: number | null): Promise<EndedTrace[]> {
    const ofProject = projectId === null ? sql`TRUE` : sql`project_id = ${projectId}`;
    const { rows } = await sql<EndedTrace>`
      SELECT project_id AS "projectId", encode(trace_id, 'hex') AS "traceId",
             sum(events)::int AS events, sum(edges)::int AS edges
        FROM (SELECT project_id, trace_id, max(start_time) AS last, count(*) AS events, 0 AS edges
                FROM event WHERE ${ofProject} GROUP BY project_id, trace_id
              UNION ALL
              SELECT project_id, trace_id, max(start_time), 0, count(*)
                FROM span_edge WHERE ${ofProject} GROUP BY project_id, trace_id) AS spans
       GROUP BY project_id, trace_id
      HAVING max(last) < ${cutoff}
       ORDER BY project_id, trace_id`.execute(this.db);
    return rows;
  }

  /**
   * Deletes the events and span edges of those of `traces` that still have no span starting at or after `cutoff`
   * (one may have got a late span since it was listed), in one statement: one snapshot decides for both tables, so a
   * span committed meanwhile is neither deleted nor misses its trace's other half. How many of each went.
   */
  async deleteTraces(
    trx: Transaction<DB>,
    traces: readonly TraceRef[],
    cutoff: Date,
  ): Promise<{ events: number; edges: number }> {
    const stillEnded = sql<boolean>`
      NOT EXISTS (SELECT 1 FROM event n
                   WHERE n.project_id = d.project_id AND n.trace_id = d.trace_id AND n.start_time >= ${cutoff})
      AND NOT EXISTS (SELECT 1 FROM span_edge n
                       WHERE n.project_id = d.project_id AND n.trace_id = d.trace_id AND n.start_time >= ${cutoff})`;
    const { rows } = await sql<{ events: number; edges: number }>`
      WITH events AS (DELETE FROM event d WHERE ${inTraces(traces, 'd')} AND ${stillEnded} RETURNING 1),
           edges AS (DELETE FROM span_edge d WHERE ${inTraces(traces, 'd')} AND ${stillEnded} RETURNING 1)
      SELECT (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM edges)::int AS edges`.execute(
      trx,
    );
    return rows[0]!;
  }

  /** Deletes the records of OTLP requests received before `cutoff`, in the caller's transaction; how many went. */
  async deleteIngestRecordsBefore(
    trx: Transaction<DB>,
    cutoff: Date,
    projectId: number | null,
  ): Promise<number> {
    const deleted = await trx
      .deleteFrom('ingest_batch')
      .where(sql<boolean>`received_at < ${cutoff}`)
      .$if(projectId !== null, (qb) => qb.where('project_id', '=', projectId!))
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }
}
