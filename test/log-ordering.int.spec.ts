import { Kysely, PostgresDialect, sql } from 'kysely';
import { Client, Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { Database } from '../apps/server/src/database/database';
import type { DB } from '../apps/server/src/database/schema';
import {
  EventRepository,
  LOG_START,
  type LogPosition,
} from '../apps/server/src/repositories/event.repository';
import { createTestDatabase, type TestDatabase } from './support/postgres';

/**
 * eventstore.md §1: a transaction that took its id first but commits last must not be skipped by a reader
 * that checkpointed past a faster transaction. Two real connections interleave; PGlite has only one
 * session, so this race cannot happen there and the test is Postgres-only.
 */
describe('global log order (xid8 + pg_snapshot_xmin)', () => {
  let database: TestDatabase;
  let db: Kysely<DB>;
  let events: EventRepository;
  const clients: Client[] = [];

  beforeAll(async () => {
    database = await createTestDatabase(inject('templateDatabase'));
    db = new Kysely<DB>({
      dialect: new PostgresDialect({ pool: new Pool({ connectionString: database.url }) }),
    });
    events = new EventRepository({ db } as Database);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end()));
    await db.destroy();
    await database.drop();
  });

  async function connect(): Promise<Client> {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    clients.push(client);
    return client;
  }

  const insertEvent = (client: Client, spanIdHex: string) =>
    client.query(
      `INSERT INTO event (project_id, trace_id, span_id, start_time, end_time, type, data)
       VALUES (1, decode('0af7651916cd43dd8448eb211c80319c', 'hex'), decode($1, 'hex'), now(), now(), 'ToolCallObserved', '{}')`,
      [spanIdHex],
    );

  const poll = (after: LogPosition) => events.readAfter(db, after, 100);

  /** Other spec files share the cluster and its snapshot horizon: wait out their short transactions. */
  async function pollUntil(after: LogPosition, count: number) {
    for (let attempt = 0; ; attempt++) {
      const rows = await poll(after);
      if (rows.length >= count || attempt === 100) return rows;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('does not skip events written by a slow transaction that began before a faster one', async () => {
    const slow = await connect();
    const fast = await connect();

    await slow.query('BEGIN');
    await slow.query('SELECT pg_current_xact_id()'); // takes its transaction id now, before the fast one
    await fast.query('BEGIN');
    await insertEvent(fast, '00000000000000f1');
    await fast.query('COMMIT');

    const whileSlowIsOpen = await poll(LOG_START);
    expect(whileSlowIsOpen).toHaveLength(0); // the fast event is committed but sits above the horizon

    await insertEvent(slow, '00000000000000a1');
    await slow.query('COMMIT');

    const afterBoth = await pollUntil(LOG_START, 2);
    expect(afterBoth.map((row) => row.globalPosition)).toHaveLength(2);
    const [first, second] = afterBoth;
    // xid order: the slow transaction's event first, though its sequence number is higher.
    expect(BigInt(first!.transactionId)).toBeLessThan(BigInt(second!.transactionId));
    expect(BigInt(first!.globalPosition)).toBeGreaterThan(BigInt(second!.globalPosition));

    const afterCheckpoint = await poll({
      transactionId: second!.transactionId,
      globalPosition: second!.globalPosition,
    });
    expect(afterCheckpoint).toHaveLength(0);
  });

  it('does not skip an event whose sequence number is lower but whose transaction commits later', async () => {
    const slow = await connect();
    const fast = await connect();
    const start = await poll(LOG_START);
    const checkpoint = start.at(-1) ?? LOG_START;

    await slow.query('BEGIN');
    await insertEvent(slow, '00000000000000a2'); // takes the lower global_position
    await fast.query('BEGIN');
    await insertEvent(fast, '00000000000000f2');
    await fast.query('COMMIT');

    // A reader ordering by sequence alone would now checkpoint past the fast event...
    const naive = await db
      .selectFrom('event')
      .select(sql<string>`max(global_position)::text`.as('max'))
      .executeTakeFirstOrThrow();
    // ...while this one holds back: the slow transaction is still open below the fast one.
    expect(await poll(checkpoint)).toHaveLength(0);

    await slow.query('COMMIT');
    const naiveNext = await db
      .selectFrom('event')
      .select('global_position')
      .where(sql<boolean>`global_position > ${naive.max}::bigint`)
      .execute();
    expect(naiveNext).toHaveLength(0); // the naive reader has lost the slow event for good

    const rows = await pollUntil(checkpoint, 2);
    expect(rows).toHaveLength(2); // the xid-ordered reader delivers both
  });
});
