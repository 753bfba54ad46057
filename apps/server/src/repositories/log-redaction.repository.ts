import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { DATABASE, type Database } from '../database/database';
import { jsonForPostgres } from '../database/postgres-text';
import type { DB } from '../database/schema';
import { pastPosition, type LogPosition } from './event.repository';

/** An event whose data is replaced by its redacted form, by its place in the log. */
export interface RedactedEvent extends LogPosition {
  readonly data: unknown;
}

/**
 * Redacting the event log again (`events redact`): its events read in log order, batch by batch, and the data of those
 * whose texts a newer redaction catches more of replaced in place. Nothing else of an event changes: its place in the
 * log, its key and its columns stay as they are.
 */
@Injectable()
export class LogRedactionRepository {
  private readonly db: Kysely<DB>;

  constructor(@Inject(DATABASE) database: Database) {
    this.db = database.db;
  }

  /** How many events the log holds (of one project, or of all). */
  async count(projectId: number | null): Promise<number> {
    const row = await this.db
      .selectFrom('event')
      .select(sql<number>`count(*)::int`.as('count'))
      .$if(projectId !== null, (qb) => qb.where('project_id', '=', projectId!))
      .executeTakeFirstOrThrow();
    return row.count;
  }

  /**
   * The next `limit` events after `after` in log order (of one project, or of all), committed ones whatever their
   * transaction: one still open commits texts this Errata redacted.
   */
  eventsAfter(after: LogPosition, projectId: number | null, limit: number) {
    return this.db
      .selectFrom('event')
      .select([
        sql<string>`transaction_id::text`.as('transactionId'),
        sql<string>`global_position::text`.as('globalPosition'),
        'type',
        'data',
      ])
      .where(pastPosition(after))
      .$if(projectId !== null, (qb) => qb.where('project_id', '=', projectId!))
      .orderBy('transaction_id')
      .orderBy('global_position')
      .limit(limit)
      .execute();
  }

  /** Replaces the data of `events`, found by their place in the log, in one statement; how many it replaced. */
  async replaceData(db: Kysely<DB>, events: readonly RedactedEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    const rows = jsonForPostgres(events.map((e) => [e.transactionId, e.globalPosition, e.data]));
    const result = await sql`
      UPDATE event e SET data = r->2
        FROM jsonb_array_elements(${rows}::jsonb) AS r
       WHERE e.transaction_id = (r->>0)::xid8 AND e.global_position = (r->>1)::bigint`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  }

  /**
   * The next `limit` webhook messages after `afterId` by id (of one project, or of all): their bodies, which the outbox
   * keeps for every attempt and a redelivery.
   */
  messagesAfter(afterId: string | null, projectId: number | null, limit: number) {
    return this.db
      .selectFrom('webhook_delivery')
      .select(['id', 'payload'])
      .$if(afterId !== null, (qb) => qb.where('id', '>', afterId!))
      .$if(projectId !== null, (qb) => qb.where('project_id', '=', projectId!))
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /** Replaces the bodies of webhook messages, by id, in one statement; how many it replaced. */
  async replacePayloads(messages: readonly { id: string; payload: string }[]): Promise<number> {
    if (messages.length === 0) return 0;
    const rows = jsonForPostgres(messages.map((m) => [m.id, m.payload]));
    const result = await sql`
      UPDATE webhook_delivery d SET payload = r->>1
        FROM jsonb_array_elements(${rows}::jsonb) AS r
       WHERE d.id = (r->>0)::uuid`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }
}
