import { Inject, Injectable } from '@nestjs/common';
import { decideAcknowledgement, evolveFix, type Fix, type FixEvent, type FixState } from '@errata/domain';
import { sql, type Kysely } from 'kysely';
import { DATABASE, type Database } from '../database/database';
import type { DB } from '../database/schema';

/**
 * The advisory lock a fix round holds, however many instances share the database: a pair of keys, apart from the
 * single keys of the findings' locks (`lock`) and the projector's.
 */
export const FIX_ROUND_LOCK = [0x4572_7261, 0x6669_78] as const; // "Erra", "fix"

/** The fix lifecycle: events appended to `fix_event` and folded into `fix` in the caller's transaction. */
@Injectable()
export class FixRepository {
  private readonly db: Kysely<DB>;

  constructor(@Inject(DATABASE) database: Database) {
    this.db = database.db;
  }

  /** Appends events of one finding's fix and stores the fix they fold into; returns it. */
  async append(db: Kysely<DB>, projectId: number, events: readonly FixEvent[]): Promise<Fix | null> {
    const findingId = events[0]?.data.findingId;
    if (findingId === undefined) return null;
    const current = await this.get(db, projectId, findingId);
    let fix = current;
    for (const event of events) {
      fix = evolveFix(fix, event);
      await db
        .insertInto('fix_event')
        .values({
          project_id: projectId,
          finding_id: findingId,
          type: event.type,
          data: JSON.stringify(event.data),
        })
        .execute();
    }
    await db
      .insertInto('fix')
      .values({ project_id: projectId, finding_id: findingId, state: fix!.state, body: JSON.stringify(fix) })
      .onConflict((oc) =>
        oc
          .constraint('fix_pkey')
          .doUpdateSet({ state: fix!.state, body: JSON.stringify(fix), updated_at: new Date() }),
      )
      .execute();
    return fix;
  }

  /**
   * Serializes decisions about one finding's fix until the caller's transaction ends: two Errata instances, or a
   * fix round and a delivery, never both decide from the same state.
   */
  async lock(db: Kysely<DB>, projectId: number, findingId: string): Promise<void> {
    await sql`SELECT pg_advisory_xact_lock(hashtext(${`errata-fix:${projectId}:${findingId}`}))`.execute(db);
  }

  /**
   * Takes the fix-round lock for `session`, a connection held for the round, unless another instance holds it. A
   * session's lock ends with its connection, a crash's included. PostgreSQL probes the session's peer (TCP
   * keepalives; the system's default waits two hours) so that a host lost without closing it frees the lock within
   * a minute, not only when the next round is due hours later.
   */
  async tryRoundLock(session: Kysely<DB>): Promise<boolean> {
    const { rows } = await sql<{ locked: boolean }>`
      SELECT set_config('tcp_keepalives_idle', '15', false), set_config('tcp_keepalives_interval', '10', false),
             set_config('tcp_keepalives_count', '3', false),
             pg_try_advisory_lock(${FIX_ROUND_LOCK[0]}, ${FIX_ROUND_LOCK[1]}) AS locked`.execute(session);
    return rows[0]?.locked === true;
  }

  async roundUnlock(session: Kysely<DB>): Promise<void> {
    await sql`SELECT pg_advisory_unlock(${FIX_ROUND_LOCK[0]}, ${FIX_ROUND_LOCK[1]})`.execute(session);
  }

  /**
   * Appends FixAcknowledged, unless the fix is acknowledged already (`recorded: false`, the fix as it stands). Null
   * when the finding has no fix.
   */
  async acknowledge(
    projectId: number,
    findingId: string,
    by: string,
  ): Promise<{ fix: Fix; recorded: boolean } | null> {
    return this.db.transaction().execute(async (trx) => {
      await this.lock(trx, projectId, findingId);
      const fix = await this.get(trx, projectId, findingId);
      if (fix === null) return null;
      const acknowledged = decideAcknowledgement(fix, { by, at: new Date().toISOString() });
      if (acknowledged === null) return { fix, recorded: false };
      return { fix: (await this.append(trx, projectId, [acknowledged]))!, recorded: true };
    });
  }

  async get(db: Kysely<DB>, projectId: number, findingId: string): Promise<Fix | null> {
    const row = await db
      .selectFrom('fix')
      .select('body')
      .where('project_id', '=', projectId)
      .where('finding_id', '=', findingId)
      .executeTakeFirst();
    return (row?.body as Fix | undefined) ?? null;
  }

  /** A finding's fix as it stands, outside any transaction. */
  current(projectId: number, findingId: string): Promise<Fix | null> {
    return this.get(this.db, projectId, findingId);
  }

  /** By finding id; those in `state` only, when given; a page of them, when given. */
  async list(
    projectId: number,
    filter: { state?: FixState | null; page?: { limit: number; offset: number } } = {},
  ): Promise<Fix[]> {
    const { state = null, page } = filter;
    const rows = await this.db
      .selectFrom('fix')
      .select('body')
      .where('project_id', '=', projectId)
      .$if(state !== null, (qb) => qb.where('state', '=', state!))
      .orderBy('finding_id')
      .$if(page !== undefined, (qb) => qb.limit(page!.limit).offset(page!.offset))
      .execute();
    return rows.map((row) => row.body as Fix);
  }

  /** Every fix event of a finding, oldest first. */
  events(db: Kysely<DB>, projectId: number, findingId: string) {
    return db
      .selectFrom('fix_event')
      .select(['type', 'data', 'recorded_at as recordedAt'])
      .where('project_id', '=', projectId)
      .where('finding_id', '=', findingId)
      .orderBy('global_position')
      .execute();
  }

  /** A finding's fix events, oldest first: what the fix was folded from. */
  async history(db: Kysely<DB>, projectId: number, findingId: string): Promise<FixEvent[]> {
    const rows = await this.events(db, projectId, findingId);
    return rows.map((row) => ({ type: row.type, data: row.data }) as FixEvent);
  }

  /** The fix events of each of these findings (those with none left out), oldest first: one read for a fix round. */
  async histories(projectId: number, findingIds: readonly string[]): Promise<Map<string, FixEvent[]>> {
    const histories = new Map<string, FixEvent[]>();
    if (findingIds.length === 0) return histories;
    const rows = await this.db
      .selectFrom('fix_event')
      .select(['finding_id', 'type', 'data'])
      .where('project_id', '=', projectId)
      .where(sql<boolean>`finding_id = ANY(${findingIds}::text[])`)
      .orderBy('finding_id')
      .orderBy('global_position')
      .execute();
    for (const row of rows) {
      const history = histories.get(row.finding_id) ?? [];
      if (history.length === 0) histories.set(row.finding_id, history);
      history.push({ type: row.type, data: row.data } as FixEvent);
    }
    return histories;
  }

  /** Projects that have server owners: the ones fixes are worked out for. */
  async projectsWithOwners(): Promise<number[]> {
    const rows = await this.db.selectFrom('server_owner').select('project_id').distinct().execute();
    return rows.map((row) => row.project_id);
  }
}
