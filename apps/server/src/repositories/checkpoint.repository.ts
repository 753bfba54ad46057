import { Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../database/schema';
import {
  derivationChanges,
  recordedDerivation,
  type DerivationSettings,
} from '../projections/derivation-settings';
import { LOG_START, type LogPosition } from './event.repository';

/** The tables projections read, in log order. */
export type ProjectedTable = 'event' | 'span_edge';

export interface Checkpoint {
  readonly version: number;
  readonly position: LogPosition;
  /** The last record's global_position when a rebuild began (null: never rebuilt). */
  readonly rebuildUntil: string | null;
  /** The settings its read models were derived with (null: not recorded). */
  readonly derivation: DerivationSettings | null;
}

/** Projection checkpoints; every write is a compare-and-set inside the caller's transaction. */
@Injectable()
export class CheckpointRepository {
  async get(db: Kysely<DB>, name: string): Promise<Checkpoint | null> {
    const row = await db
      .selectFrom('projection_checkpoint')
      .select([
        'version',
        sql<string>`transaction_id::text`.as('transactionId'),
        sql<string>`global_position::text`.as('globalPosition'),
        sql<string | null>`rebuild_until::text`.as('rebuildUntil'),
        'derivation',
      ])
      .where('name', '=', name)
      .executeTakeFirst();
    return row
      ? {
          version: row.version,
          position: { transactionId: row.transactionId, globalPosition: row.globalPosition },
          rebuildUntil: row.rebuildUntil,
          derivation: recordedDerivation(row.derivation),
        }
      : null;
  }

  /** Creates the checkpoint at the log's start unless it exists. */
  async ensure(db: Kysely<DB>, name: string, version: number, derivation: DerivationSettings): Promise<void> {
    await db
      .insertInto('projection_checkpoint')
      .values({
        name,
        version,
        transaction_id: LOG_START.transactionId,
        global_position: LOG_START.globalPosition,
        derivation: JSON.stringify(derivation),
      })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
  }

  /** Records the settings the read models are derived with, where none were (a database older than 0017). */
  async recordDerivation(db: Kysely<DB>, name: string, derivation: DerivationSettings): Promise<void> {
    await db
      .updateTable('projection_checkpoint')
      .set({ derivation: JSON.stringify(derivation) })
      .where('name', '=', name)
      .where('derivation', 'is', null)
      .execute();
  }

  /** Moves `expected` → `next`; false when another writer moved it first (the caller must roll back). */
  async compareAndSet(
    db: Kysely<DB>,
    name: string,
    version: number,
    expected: LogPosition,
    next: LogPosition,
  ): Promise<boolean> {
    const result = await db
      .updateTable('projection_checkpoint')
      .set({
        transaction_id: sql`${next.transactionId}::xid8`,
        global_position: next.globalPosition,
        updated_at: sql`now()`,
      })
      .where('name', '=', name)
      .where('version', '=', version)
      .where(sql<boolean>`transaction_id = ${expected.transactionId}::xid8`)
      .where(sql<boolean>`global_position = ${expected.globalPosition}::bigint`)
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  /**
   * Back to the log's start, at `version` (a rebuild, or rules or settings that changed) and with `derivation`, with the
   * last record of `logTable` (the table the projection reads) as the point the rebuild must pass.
   */
  async reset(
    db: Kysely<DB>,
    name: string,
    version: number,
    logTable: ProjectedTable,
    derivation: DerivationSettings,
  ): Promise<void> {
    await db
      .updateTable('projection_checkpoint')
      .set({
        version,
        derivation: JSON.stringify(derivation),
        transaction_id: LOG_START.transactionId,
        global_position: LOG_START.globalPosition,
        rebuild_until: sql`(SELECT max(global_position) FROM ${sql.table(logTable)})`,
        updated_at: sql`now()`,
      })
      .where('name', '=', name)
      .execute();
  }

  /**
   * Whether any of `projections` (each with the table it reads) is rebuilding for rules `version`: its checkpoint is
   * of an older version, or was derived with other settings than `derivation` (given by a projector that has yet to
   * look: the rebuild is due, not begun yet), or a record that was in the log when its rebuild began is not projected
   * yet. Records written since are not waited for: they are the usual lag. One index probe per projection, from its
   * checkpoint on (the log's order), never a scan of the log.
   */
  async rebuilding(
    db: Kysely<DB>,
    projections: readonly (readonly [string, ProjectedTable])[],
    version: number,
    derivation: DerivationSettings | null = null,
  ): Promise<boolean> {
    for (const [name, logTable] of projections) {
      const checkpoint = await this.get(db, name);
      if (checkpoint === null) continue;
      if (checkpoint.version < version) return true;
      if (derivation !== null && checkpoint.derivation !== null)
        if (derivationChanges(checkpoint.derivation, derivation).length > 0) return true;
      if (checkpoint.rebuildUntil === null) continue;
      const { rows } = await sql<{ pending: number }>`
        SELECT 1 AS pending
          FROM ${sql.table(logTable)}
         WHERE (transaction_id, global_position)
               > (${checkpoint.position.transactionId}::xid8, ${checkpoint.position.globalPosition}::bigint)
           AND global_position <= ${checkpoint.rebuildUntil}::bigint
         ORDER BY transaction_id, global_position
         LIMIT 1`.execute(db);
      if (rows.length > 0) return true;
    }
    return false;
  }

  /** Records a record the projector set aside, in the caller's transaction (the one that moves past it). */
  async recordSkip(
    db: Kysely<DB>,
    skip: { projection: string; position: LogPosition; projectId: number; error: string },
  ): Promise<void> {
    await db
      .insertInto('projection_skip')
      .values({
        projection: skip.projection,
        transaction_id: skip.position.transactionId,
        global_position: skip.position.globalPosition,
        project_id: skip.projectId,
        error: skip.error,
      })
      .execute();
  }

  /** How many records are set aside. */
  async skippedCount(db: Kysely<DB>): Promise<number> {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM projection_skip`.execute(db);
    return rows[0]?.n ?? 0;
  }

  /** Of the `count` records right before `position` in a projection's log, how many were set aside. */
  async setAsideBefore(
    db: Kysely<DB>,
    projection: string,
    log: 'event' | 'span_edge',
    position: LogPosition,
    count: number,
  ): Promise<number> {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n
        FROM (SELECT transaction_id, global_position FROM ${sql.table(log)}
               WHERE (transaction_id, global_position) < (${position.transactionId}::xid8, ${position.globalPosition}::bigint)
               ORDER BY transaction_id DESC, global_position DESC
               LIMIT ${count}) AS previous
        JOIN projection_skip s
          ON s.projection = ${projection} AND s.transaction_id = previous.transaction_id
         AND s.global_position = previous.global_position`.execute(db);
    return rows[0]?.n ?? 0;
  }

  /** Forgets what was set aside, when a rebuild tries everything again. */
  async clearSkips(db: Kysely<DB>): Promise<void> {
    await sql`TRUNCATE projection_skip`.execute(db);
  }
}
