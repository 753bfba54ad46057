import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
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

  /** Deletes the traces' events and span edges, in one transaction; how many of each went. */
  async deleteTraces(traces: readonly TraceRef[]): Promise<{ events: number; edges: number }> {
    return this.db.transaction().execute(async (trx) => {
      const events = await trx.deleteFrom('event').where(inTraces(traces)).executeTakeFirst();
      const edges = await trx.deleteFrom('span_edge').where(inTraces(traces)).executeTakeFirst();
      return { events: Number(events.numDeletedRows), edges: Number(edges.numDeletedRows) };
    });
  }

  /** Deletes the records of OTLP requests received before `cutoff`; how many went. */
  async deleteIngestRecordsBefore(cutoff: Date, projectId: number | null): Promise<number> {
    const deleted = await this.db
      .deleteFrom('ingest_batch')
      .where(sql<boolean>`received_at < ${cutoff}`)
      .$if(projectId !== null, (qb) => qb.where('project_id', '=', projectId!))
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }
}
