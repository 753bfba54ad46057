import { Inject, Injectable } from '@nestjs/common';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { sql, type Kysely } from 'kysely';
import type { Pool } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { DATABASE, type Database } from '../database/database';
import type { DB } from '../database/schema';
import type { ToolCallData } from '@errata/domain';
import { copyField, copyHexBytes, copyJsonField } from '../database/copy-text';
import { jsonForPostgres, withoutNul } from '../database/postgres-text';
import { isoFromMicros, timestampFromMicros } from '../database/timestamps';

/** An event ready to append; ids are hex, times whole microseconds since the epoch (`unixMicros`). */
export interface NewEvent {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | null;
  readonly startMicros: number;
  readonly endMicros: number;
  readonly type: string;
  readonly serverName: string | null;
  readonly toolName: string | null;
  readonly outcome: string | null;
  readonly data: object;
}

/** The place in its trace of a span that is not an event. */
export interface NewSpanEdge {
  readonly traceId: string;
  readonly spanId: string;
  readonly startMicros: number;
  readonly parentSpanId: string;
}

export interface IngestCounts {
  readonly received: number;
  readonly dropped: number;
  readonly rejected: number;
}

/** A position in the global log: transaction id first, then sequence (eventstore.md §1). */
export interface LogPosition {
  readonly transactionId: string;
  readonly globalPosition: string;
}

export const LOG_START: LogPosition = { transactionId: '0', globalPosition: '0' };

/** Log order: negative when `a` comes before `b`. */
export function compareLogPositions(a: LogPosition, b: LogPosition): number {
  const byTransaction = BigInt(a.transactionId) - BigInt(b.transactionId);
  if (byTransaction !== 0n) return byTransaction < 0n ? -1 : 1;
  const byPosition = BigInt(a.globalPosition) - BigInt(b.globalPosition);
  return byPosition === 0n ? 0 : byPosition < 0n ? -1 : 1;
}

const UNIQUE_VIOLATION = '23505';

/** Rows after `after` in (transaction id, position) order: every committed one, whatever may still commit below. */
export const pastPosition = (after: LogPosition) =>
  sql<boolean>`(transaction_id, global_position) > (${after.transactionId}::xid8, ${after.globalPosition}::bigint)`;

/**
 * Rows after `after` in (transaction id, position) order, never past a transaction that may still commit below
 * them: only from transactions older than every one still running (one statement, one snapshot).
 */
const afterInLogOrder = (after: LogPosition) =>
  sql<boolean>`${pastPosition(after)} AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())`;

/** The edges of a request, as a data-modifying CTE body. */
function insertEdges(projectId: number, edges: readonly NewSpanEdge[]) {
  const rows = JSON.stringify(edges.map((e) => [e.traceId, e.spanId, e.startMicros, e.parentSpanId]));
  return sql`
    INSERT INTO span_edge (project_id, trace_id, span_id, start_time, parent_span_id)
    SELECT ${projectId}::int, decode(r->>0, 'hex'), decode(r->>1, 'hex'),
           ${timestampFromMicros(sql`(r->>2)::bigint`)}, decode(r->>3, 'hex')
      FROM jsonb_array_elements(${rows}::jsonb) AS r
    ON CONFLICT DO NOTHING`;
}

function eventsAsCopyText(projectId: number, events: readonly NewEvent[]): string {
  // Concatenated field by field: this runs for every event ingested (bench:ingest).
  const project = String(projectId);
  let text = '';
  for (const e of events) {
    text +=
      `${project}\t${copyHexBytes(e.traceId)}\t${copyHexBytes(e.spanId)}\t` +
      `${isoFromMicros(e.startMicros)}\t${isoFromMicros(e.endMicros)}\t${copyHexBytes(e.parentSpanId)}\t` +
      `${copyField(withoutNul(e.type))}\t${copyField(withoutNul(e.serverName))}\t` +
      `${copyField(withoutNul(e.toolName))}\t${copyField(withoutNul(e.outcome))}\t` +
      `${copyJsonField(jsonForPostgres(e.data))}\n`;
  }
  return text;
}

@Injectable()
export class EventRepository {
  private readonly db: Kysely<DB>;
  private readonly pool: Pool | null;

  constructor(@Inject(DATABASE) database: Database) {
    this.db = database.db;
    this.pool = database.pool;
  }

  /**
   * Appends a request's events, kept edges and counts in one transaction; resolves after the commit.
   * On PostgreSQL the events go in by COPY, the fastest path there is; COPY cannot skip duplicates, so a
   * request holding a span that is already stored (an exporter retrying) fails it on the key and takes the
   * INSERT … ON CONFLICT DO NOTHING path instead. PGlite has no COPY from a client stream: it always inserts.
   */
  async append(
    projectId: number,
    events: readonly NewEvent[],
    edges: readonly NewSpanEdge[],
    counts: IngestCounts,
  ) {
    if (this.pool && events.length > 0) {
      const copied = await this.appendByCopy(this.pool, projectId, events, edges, counts);
      if (copied) return copied;
    }
    return this.appendByInsert(projectId, events, edges, counts);
  }

  private async appendByCopy(
    pool: Pool,
    projectId: number,
    events: readonly NewEvent[],
    edges: readonly NewSpanEdge[],
    counts: IngestCounts,
  ): Promise<{ appended: number } | null> {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      try {
        const copy = client.query(
          copyFrom(
            'COPY event (project_id, trace_id, span_id, start_time, end_time, parent_span_id, type, server_name, ' +
              'tool_name, outcome, data) FROM STDIN',
          ),
        );
        await pipeline(Readable.from([eventsAsCopyText(projectId, events)]), copy);
        const rest = sql`
          WITH edges AS (${insertEdges(projectId, edges)})
          INSERT INTO ingest_batch (project_id, spans_received, events_appended, spans_dropped, spans_rejected)
          VALUES (${projectId}, ${counts.received}, ${events.length}, ${counts.dropped}, ${counts.rejected})`.compile(
          this.db,
        );
        await client.query(rest.sql, [...rest.parameters]);
        await client.query('COMMIT');
        return { appended: events.length };
      } catch (error) {
        if ((error as { code?: string }).code === UNIQUE_VIOLATION) {
          await client.query('ROLLBACK');
          return null;
        }
        // Anything else may have left the connection mid-COPY: discard it rather than hand it back to the pool.
        broken = error instanceof Error ? error : new Error(String(error));
        throw error;
      }
    } finally {
      client.release(broken);
    }
  }

  /**
   * One statement, so one round trip and one implicit transaction. Duplicates (an exporter retrying, or a span
   * twice in one request) are skipped by the key. The rows travel as one JSON document of positional arrays:
   * serialized once in Node and parsed once in Postgres (`jsonb_array_elements`), far cheaper than an array
   * literal per column with every event's JSON escaped inside it, or `jsonb_to_recordset` (BENCHMARKS.md).
   */
  private async appendByInsert(
    projectId: number,
    events: readonly NewEvent[],
    edges: readonly NewSpanEdge[],
    counts: IngestCounts,
  ) {
    const eventRows = jsonForPostgres(
      events.map((e) => [
        e.traceId,
        e.spanId,
        e.parentSpanId,
        e.startMicros,
        e.endMicros,
        e.type,
        e.serverName,
        e.toolName,
        e.outcome,
        e.data,
      ]),
    );
    const { rows } = await sql<{ appended: number }>`
      WITH appended AS (
        INSERT INTO event (project_id, trace_id, span_id, start_time, end_time, parent_span_id, type,
                           server_name, tool_name, outcome, data)
        SELECT ${projectId}::int, decode(r->>0, 'hex'), decode(r->>1, 'hex'),
               ${timestampFromMicros(sql`(r->>3)::bigint`)}, ${timestampFromMicros(sql`(r->>4)::bigint`)},
               decode(r->>2, 'hex'), r->>5, r->>6, r->>7, r->>8, r->9
          FROM jsonb_array_elements(${eventRows}::jsonb) AS r
        ON CONFLICT DO NOTHING
        RETURNING 1
      ), edges AS (${insertEdges(projectId, edges)})
      INSERT INTO ingest_batch (project_id, spans_received, events_appended, spans_dropped, spans_rejected)
      SELECT ${projectId}::int, ${counts.received}::int, (SELECT count(*) FROM appended)::int,
             ${counts.dropped}::int, ${counts.rejected}::int
      RETURNING events_appended AS appended`.execute(this.db);
    return { appended: rows[0]?.appended ?? 0 };
  }

  /**
   * The next events after `after`, never past a transaction that may still commit below it: rows are read
   * only from transactions older than every one still running (one statement, one snapshot).
   */
  readAfter(db: Kysely<DB>, after: LogPosition, limit: number) {
    return db
      .selectFrom('event')
      .select([
        sql<string>`transaction_id::text`.as('transactionId'),
        sql<string>`global_position::text`.as('globalPosition'),
        'project_id as projectId',
        'type',
        'data',
      ])
      .where(afterInLogOrder(after))
      .orderBy('transaction_id')
      .orderBy('global_position')
      .limit(limit)
      .execute();
  }

  /** Span edges after `after` in log order, below the snapshot horizon: which traces they touch. */
  readEdgesAfter(db: Kysely<DB>, after: LogPosition, limit: number) {
    return db
      .selectFrom('span_edge')
      .select([
        sql<string>`transaction_id::text`.as('transactionId'),
        sql<string>`global_position::text`.as('globalPosition'),
        'project_id as projectId',
        sql<string>`encode(trace_id, 'hex')`.as('traceId'),
      ])
      .where(afterInLogOrder(after))
      .orderBy('transaction_id')
      .orderBy('global_position')
      .limit(limit)
      .execute();
  }

  /** The last committed event (or span edge) in log order, or null when there is none. */
  async lastPosition(log: 'event' | 'span_edge' = 'event'): Promise<LogPosition | null> {
    const row = await this.db
      .selectFrom(log)
      .select([
        sql<string>`transaction_id::text`.as('transactionId'),
        sql<string>`global_position::text`.as('globalPosition'),
      ])
      .orderBy('transaction_id', 'desc')
      .orderBy('global_position', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ?? null;
  }

  /**
   * Seconds since the first event after `after` in log order was received, or null when there is none: how far the
   * reports are behind. Committed events only; a transaction still open below them holds them back all the same.
   */
  async secondsWaitingAfter(db: Kysely<DB>, after: LogPosition): Promise<number | null> {
    const row = await db
      .selectFrom('event')
      .select(sql<number>`extract(epoch FROM now() - received_at)::float8`.as('seconds'))
      .where(pastPosition(after))
      .orderBy('transaction_id')
      .orderBy('global_position')
      .limit(1)
      .executeTakeFirst();
    return row ? Math.max(0, row.seconds) : null;
  }

  async countEdges(): Promise<number> {
    const row = await this.db
      .selectFrom('span_edge')
      .select(sql<number>`count(*)::int`.as('count'))
      .executeTakeFirstOrThrow();
    return row.count;
  }

  /**
   * Per group of `groups` (in their order), what its logged tool calls (ids hex) declared and returned, in the order
   * of the group's spans (one not in the log is left out): the read models keep a call's text, not its structured
   * content, and a code a tool declared only there is read from the log. One statement for every group.
   */
  async toolCallDeclarations(
    projectId: number,
    groups: readonly (readonly { readonly traceId: string; readonly spanId: string }[])[],
  ): Promise<Pick<ToolCallData, 'declared' | 'result'>[][]> {
    const declarations = groups.map((): Pick<ToolCallData, 'declared' | 'result'>[] => []);
    const spans = groups.flatMap((spans, group) => spans.map((span) => ({ ...span, group })));
    if (spans.length === 0) return declarations;
    const { rows } = await sql<{
      group: number;
      declared: ToolCallData['declared'];
      result: ToolCallData['result'];
    }>`
      SELECT s.grp AS "group", e.data->'declared' AS declared, e.data->'result' AS result
        FROM unnest(${spans.map((span) => span.traceId)}::text[], ${spans.map((span) => span.spanId)}::text[],
                    ${spans.map((span) => span.group)}::int[])
             WITH ORDINALITY AS s (trace_id, span_id, grp, i)
        JOIN event e ON e.project_id = ${projectId} AND e.trace_id = decode(s.trace_id, 'hex')
                    AND e.span_id = decode(s.span_id, 'hex') AND e.type = 'ToolCallObserved'
       ORDER BY s.i, e.start_time`.execute(this.db);
    for (const { group, ...declaration } of rows) declarations[group]!.push(declaration);
    return declarations;
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('event')
      .select(sql<number>`count(*)::int`.as('count'))
      .executeTakeFirstOrThrow();
    return row.count;
  }
}
