import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { DATABASE, type Database } from '../database/database';
import type { DB } from '../database/schema';

/** Where a webhook message stands. */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead', 'disabled'] as const;

export interface NewDelivery {
  readonly projectId: number;
  readonly ownerId: string;
  readonly findingId: string | null;
  readonly msgId: string;
  readonly dedupeKey: string;
  readonly eventType: string;
  readonly payload: string;
}

const iso = (column: string) =>
  sql<string | null>`to_char(${sql.ref(column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * When the next attempt is due, null when none will be made: the column keeps when the last one was due, and a
 * dead letter showing a time to come would claim a retry that never happens. Only pending messages are attempted
 * (a redelivery makes one pending again).
 */
const nextAttemptAt = sql<
  string | null
>`CASE WHEN ${sql.ref('status')} = 'pending' THEN ${iso('next_attempt_at')} END`;

const LISTED = [
  'id',
  'owner_id as ownerId',
  'finding_id as findingId',
  'msg_id as msgId',
  'event_type as eventType',
  'status',
  'attempts',
  nextAttemptAt.as('nextAttemptAt'),
  'last_status as lastStatus',
  'last_error as lastError',
  iso('created_at').as('createdAt'),
  iso('delivered_at').as('deliveredAt'),
] as const;

/**
 * The webhook outbox (eventstore.md §4): messages are enqueued in the transaction that decides them, claimed with
 * `FOR UPDATE SKIP LOCKED` under a lease, and sent outside any transaction.
 */
@Injectable()
export class DeliveryRepository {
  private readonly db: Kysely<DB>;

  constructor(@Inject(DATABASE) database: Database) {
    this.db = database.db;
  }

  /**
   * How many of a finding's webhook messages are pending, delivered, dead or disabled, and where the latest one
   * stands: what a read key may see (no owner, URL or error text; those are the admin API's).
   */
  async findingStatus(projectId: number, findingId: string) {
    const counts = await this.db
      .selectFrom('webhook_delivery')
      .select(['status', (eb) => eb.fn.countAll<string>().as('n')])
      .where('project_id', '=', projectId)
      .where('finding_id', '=', findingId)
      .groupBy('status')
      .execute();
    const latest = await this.db
      .selectFrom('webhook_delivery')
      .select([
        'status',
        'attempts',
        'last_status as lastStatus',
        iso('created_at').as('createdAt'),
        nextAttemptAt.as('nextAttemptAt'),
        iso('delivered_at').as('deliveredAt'),
      ])
      .where('project_id', '=', projectId)
      .where('finding_id', '=', findingId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    const count = (status: string) => Number(counts.find((row) => row.status === status)?.n ?? 0);
    return {
      pending: count('pending'),
      delivered: count('delivered'),
      dead: count('dead'),
      disabled: count('disabled'),
      latest: latest ?? null,
    };
  }

  /** Enqueues in the caller's transaction; a message already enqueued for that owner (same dedupe key) is kept. */
  async enqueue(db: Kysely<DB>, delivery: NewDelivery): Promise<void> {
    await db
      .insertInto('webhook_delivery')
      .values({
        project_id: delivery.projectId,
        owner_id: delivery.ownerId,
        finding_id: delivery.findingId,
        msg_id: delivery.msgId,
        dedupe_key: delivery.dedupeKey,
        event_type: delivery.eventType,
        payload: delivery.payload,
      })
      .onConflict((oc) => oc.constraint('webhook_delivery_dedupe_uq').doNothing())
      .execute();
  }

  /**
   * For each (finding, dedupe key) of `messages`, the project's owners that have that message (sent or not), keyed by
   * `sentKey`: one read for a fix round.
   */
  async ownersSent(
    projectId: number,
    messages: readonly { readonly findingId: string; readonly dedupeKey: string }[],
  ): Promise<Map<string, Set<string>>> {
    const owners = new Map<string, Set<string>>();
    if (messages.length === 0) return owners;
    const { rows } = await sql<{ findingId: string; dedupeKey: string; ownerId: string }>`
      SELECT d.finding_id AS "findingId", d.dedupe_key AS "dedupeKey", d.owner_id AS "ownerId"
        FROM webhook_delivery d
       WHERE d.project_id = ${projectId} AND (d.finding_id, d.dedupe_key) IN (
               SELECT m.finding_id, m.dedupe_key
                 FROM unnest(${messages.map((m) => m.findingId)}::text[],
                             ${messages.map((m) => m.dedupeKey)}::text[]) AS m (finding_id, dedupe_key))`.execute(
      this.db,
    );
    for (const row of rows) {
      const key = sentKey(row.findingId, row.dedupeKey);
      owners.set(key, (owners.get(key) ?? new Set()).add(row.ownerId));
    }
    return owners;
  }

  /** Claims up to `limit` due deliveries of enabled owners for `leaseMs`, counting the attempt. */
  async claimDue(limit: number, leaseMs: number) {
    const { rows } = await sql<{
      id: string;
      projectId: number;
      ownerId: string;
      findingId: string | null;
      msgId: string;
      dedupeKey: string;
      eventType: string;
      payload: string;
      attempts: number;
    }>`
      UPDATE webhook_delivery d SET attempts = d.attempts + 1, lease_until = now() + ${leaseMs} * interval '1 millisecond'
       WHERE d.id IN (SELECT w.id FROM webhook_delivery w JOIN server_owner o ON o.id = w.owner_id
                       WHERE w.status = 'pending' AND w.next_attempt_at <= now()
                         AND coalesce(w.lease_until, '-infinity') < now() AND o.disabled_at IS NULL
                       ORDER BY w.next_attempt_at LIMIT ${limit} FOR UPDATE OF w SKIP LOCKED)
      RETURNING d.id, d.project_id AS "projectId", d.owner_id AS "ownerId", d.finding_id AS "findingId",
                d.msg_id AS "msgId", d.dedupe_key AS "dedupeKey", d.event_type AS "eventType", d.payload,
                d.attempts`.execute(this.db);
    return rows;
  }

  async markDelivered(db: Kysely<DB>, id: string, status: number): Promise<void> {
    await db
      .updateTable('webhook_delivery')
      .set({
        status: 'delivered',
        delivered_at: sql`now()`,
        last_status: status,
        last_error: null,
        lease_until: null,
      })
      .where('id', '=', id)
      .execute();
  }

  /** Another attempt after `delayMs`, or dead-lettered when `dead` (no attempt follows: none is scheduled). */
  async failed(
    id: string,
    outcome: { status: number | null; error: string; delayMs: number; dead: boolean },
  ) {
    await this.db
      .updateTable('webhook_delivery')
      .set({
        status: outcome.dead ? 'dead' : 'pending',
        last_status: outcome.status,
        last_error: outcome.error.slice(0, 500),
        lease_until: null,
        ...(outcome.dead
          ? {}
          : { next_attempt_at: sql`now() + ${outcome.delayMs} * interval '1 millisecond'` }),
      })
      .where('id', '=', id)
      .execute();
  }

  /** An owner's endpoint answered 410 Gone: its pending deliveries stop. */
  async disableOwnerDeliveries(
    db: Kysely<DB>,
    ownerId: string,
    status: number,
    error: string,
  ): Promise<void> {
    await db
      .updateTable('webhook_delivery')
      .set({ status: 'disabled', last_status: status, last_error: error, lease_until: null })
      .where('owner_id', '=', ownerId)
      .where('status', '=', 'pending')
      .execute();
  }

  /** Newest first; deliveries created in the same instant in one order every time, so that pages do not overlap. */
  list(projectId: number, status: string | null, page: { limit: number; offset: number }) {
    return this.db
      .selectFrom('webhook_delivery')
      .select(LISTED)
      .where('project_id', '=', projectId)
      .$if(status !== null, (qb) => qb.where('status', '=', status as 'pending'))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
  }

  /**
   * A dead-lettered, disabled or delivered message goes out again now, with the same webhook-id. A new cycle of
   * attempts: what the previous one ended with goes, or a redelivery that then dies would claim it was delivered.
   * A pending one is left as it is (`redelivered: false`); `delivery` is undefined when the project has no such one.
   */
  async redeliver(projectId: number, id: string) {
    return this.db.transaction().execute(async (trx) => {
      const current = await trx
        .selectFrom('webhook_delivery')
        .select(LISTED)
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      // A pending message goes out on its own: a new cycle would throw away the attempts it has made.
      if (current === undefined || current.status === 'pending')
        return { delivery: current, redelivered: false };
      const delivery = await trx
        .updateTable('webhook_delivery')
        .set({
          status: 'pending',
          attempts: 0,
          next_attempt_at: sql`now()`,
          lease_until: null,
          delivered_at: null,
          last_status: null,
          last_error: null,
        })
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .returning(LISTED)
        .executeTakeFirstOrThrow();
      return { delivery, redelivered: true };
    });
  }
}

/** How `ownersSent` keys a finding's message. */
export const sentKey = (findingId: string, dedupeKey: string): string => `${findingId}\n${dedupeKey}`;
