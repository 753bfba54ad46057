import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../database/schema';
import type { ProjectedTable } from './checkpoint.repository';

/** What renumbering moved: the projections that held foreign positions, and the records of each log table. */
export interface Renumbered {
  readonly projections: number;
  readonly events: number;
  readonly spanEdges: number;
}

/**
 * Log positions (`transaction_id`, xid8) that another PostgreSQL server assigned: a database restored from `pg_dump`
 * onto a server whose transaction counter is lower (a move, a major-version upgrade by dump and restore). On one
 * server every stored position lies below its next transaction id; a restored one may lie far above, where the
 * projector never reads (`pg_snapshot_xmin`) and where new events, numbered by this server, sort before the
 * checkpoint that is never to look back at them.
 */
export class RestoredLogRepository {
  /**
   * Whether any log record, checkpoint or set-aside record holds a transaction id this server has not reached: one
   * index probe a table (the log's order), cheap enough for every start.
   */
  async holdsForeignPositions(db: Kysely<DB>): Promise<boolean> {
    const { rows } = await sql<{ foreign: boolean }>`
      SELECT greatest(
               (SELECT transaction_id FROM event ORDER BY transaction_id DESC, global_position DESC LIMIT 1),
               (SELECT transaction_id FROM span_edge ORDER BY transaction_id DESC, global_position DESC LIMIT 1),
               (SELECT max(transaction_id) FROM projection_checkpoint),
               (SELECT max(transaction_id) FROM projection_skip)
             ) >= pg_snapshot_xmax(pg_current_snapshot()) AS foreign`.execute(db);
    return rows[0]?.foreign === true;
  }

  /**
   * Renumbers the positions another server assigned into this server's order, in the caller's transaction, for each
   * projection (its checkpoint's name and the table it reads). Ingest and projectors wait meanwhile (the lock), and
   * whatever this server wrote is ordered after what came restored (its numbers are still far below).
   *
   * A server whose counter is lower may have fewer ids below it than the restored log has transactions, so the order
   * is kept where it counts: the records at or before the projection's checkpoint take transaction id 1, those after
   * it 2, each in `global_position` order; the checkpoint moves to the last record of 1. What was projected stays
   * projected and what was not is projected next; nothing below 3 is ever a transaction's own id. Records of this
   * server's (written since the restore by an Errata without this step, or of the first server's first transactions)
   * now sort after the checkpoint and are projected again: a projection applies a record any number of times alike
   * (upserts, traces re-derived whole). Set-aside records are renumbered with their record, and forgotten when it lies
   * after the checkpoint now (it is tried again).
   */
  async renumber(
    trx: Transaction<DB>,
    projections: readonly (readonly [string, ProjectedTable])[],
  ): Promise<Renumbered> {
    // Ingest (ROW EXCLUSIVE) and every projector's checkpoint write wait; a second Errata starting takes its turn.
    await sql`LOCK TABLE event, span_edge, projection_checkpoint, projection_skip IN SHARE ROW EXCLUSIVE MODE`.execute(
      trx,
    );
    const counts: Record<ProjectedTable, number> = { event: 0, span_edge: 0 };
    // Looked for again under the lock: another Errata starting at the same moment may have renumbered them first.
    let renumbered = 0;
    for (const [name, table] of projections) {
      const log = sql.table(table);
      const horizon = sql`pg_snapshot_xmax(pg_current_snapshot())`;
      const { rows } = await sql<{ foreign: boolean }>`
        SELECT EXISTS (SELECT 1 FROM ${log} WHERE transaction_id >= ${horizon})
            OR EXISTS (SELECT 1 FROM projection_checkpoint WHERE name = ${name} AND transaction_id >= ${horizon})
            OR EXISTS (SELECT 1 FROM projection_skip WHERE projection = ${name} AND transaction_id >= ${horizon})
               AS foreign`.execute(trx);
      if (rows[0]?.foreign !== true) continue;
      renumbered += 1;
      // Null without a checkpoint: nothing was projected.
      const projected = sql`(transaction_id, global_position)
        <= (SELECT transaction_id, global_position FROM projection_checkpoint WHERE name = ${name})`;
      const band = sql`CASE WHEN coalesce(${projected}, false) THEN '1'::xid8 ELSE '2'::xid8 END`;
      const moved = await sql`
        UPDATE ${log} SET transaction_id = ${band} WHERE transaction_id >= ${horizon}`.execute(trx);
      counts[table] += Number(moved.numAffectedRows ?? 0);
      await sql`
        UPDATE projection_skip SET transaction_id = ${band}
         WHERE projection = ${name} AND transaction_id >= ${horizon}`.execute(trx);
      await sql`
        UPDATE projection_checkpoint
           SET transaction_id = CASE WHEN last.position IS NULL THEN '0'::xid8 ELSE '1'::xid8 END,
               global_position = coalesce(last.position, 0),
               updated_at = now()
          FROM (SELECT max(global_position) AS position FROM ${log} WHERE transaction_id = '1'::xid8) AS last
         WHERE name = ${name}`.execute(trx);
      await sql`
        DELETE FROM projection_skip s USING projection_checkpoint c
         WHERE s.projection = ${name} AND c.name = ${name}
           AND (s.transaction_id, s.global_position) > (c.transaction_id, c.global_position)`.execute(trx);
    }
    return { projections: renumbered, events: counts.event, spanEdges: counts.span_edge };
  }
}
