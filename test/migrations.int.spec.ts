import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Client, Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openMigratedDatabase, type Database } from '../apps/server/src/database/database';
import { MIGRATIONS_DIR, pendingMigrations } from '../apps/server/src/database/migrations';
import type { DB } from '../apps/server/src/database/schema';
import { CheckpointRepository } from '../apps/server/src/repositories/checkpoint.repository';
import { EventRepository } from '../apps/server/src/repositories/event.repository';
import { HealthService } from '../apps/server/src/services/health.service';
import { READ_MODELS_PROJECTION } from '../apps/server/src/projections/projection-logs';
import { READ_MODELS_VERSION, standaloneProjector } from '../apps/server/src/services/projector.service';
import { loadConfig } from '../apps/server/src/config/app-config';
import { CLI, runCli } from './support/cli';
import { adminDatabaseUrl, createTestDatabase, databaseUrlFor, type TestDatabase } from './support/postgres';
import { until } from './support/until';

const run = promisify(execFile);

/** The readiness check on `database`, wired as the server wires it (its projector says whether a rebuild is due). */
function healthOf(database: Database): HealthService {
  const projector = standaloneProjector(loadConfig({}), database);
  return new HealthService(database, new CheckpointRepository(), new EventRepository(database), projector);
}

/** `npm run migrate` on an empty database, and /readyz's view of a database that is not migrated. */
describe('migrations and readiness', () => {
  const name = `errata_empty_${process.pid}_${Date.now()}`;
  let db: Kysely<DB>;
  let health: HealthService;

  beforeAll(async () => {
    const admin = new Client({ connectionString: adminDatabaseUrl() });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    db = new Kysely<DB>({
      dialect: new PostgresDialect({ pool: new Pool({ connectionString: databaseUrlFor(name) }) }),
    });
    const database = { db, kind: 'postgres', pool: null } as unknown as Database;
    health = healthOf(database);
  });
  afterAll(async () => {
    await db.destroy();
    const admin = new Client({ connectionString: adminDatabaseUrl() });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });

  it('reports not ready, naming the pending migrations, before migrating; ready after `migrate`', async () => {
    const before = await health.readiness();
    expect(before).toMatchObject({ ready: false, database: 'reachable' });
    expect(before.pendingMigrations).toContain('0001_event_log');

    const migrate = () =>
      run(process.execPath, [CLI, 'migrate'], {
        env: { ...process.env, DATABASE_URL: databaseUrlFor(name) },
      });
    // It says on stdout what it applied (an upgrade shows which), and that nothing was left to apply the next time
    const { stdout, stderr } = await migrate();
    const names = (await readdir(MIGRATIONS_DIR)).filter((file) => file.endsWith('.sql')).sort();
    expect(stdout).toMatch(
      new RegExp(
        `^applied migrations ${names.map((file) => file.replace(/\.sql$/, '')).join(', ')} \\(PostgreSQL at postgres://`,
      ),
    );
    expect(stderr).toBe('');
    expect(await migrate()).toMatchObject({
      stdout: expect.stringMatching(/^migrations up to date \(PostgreSQL at postgres:\/\//),
      stderr: '',
    });

    expect(await pendingMigrations(db, MIGRATIONS_DIR)).toEqual([]);
    expect(await health.readiness()).toMatchObject({
      ready: true,
      pendingMigrations: [],
      setAsideRecords: 0,
      projectionLagSeconds: 0,
    });
  });

  it('leaves tool_call no index by time, which no query reads it by', async () => {
    const { rows } = await sql<{ indexname: string }>`
      SELECT indexname FROM pg_indexes WHERE tablename = 'tool_call' ORDER BY indexname`.execute(db);
    expect(rows.map((row) => row.indexname)).toEqual([
      'tool_call_pkey',
      'tool_call_retry_of_idx',
      'tool_call_span_id_idx',
    ]);
  });

  it('says, after migrating, that read models of older rules are rebuilt at the next start, and how to do it now', async () => {
    // Given read models an older Errata projected
    await new CheckpointRepository().ensure(db, READ_MODELS_PROJECTION, READ_MODELS_VERSION - 1, {
      retryWindowMs: 600_000,
      maxLinkedTraces: 2000,
    });
    try {
      // When the database is migrated
      const { stdout, stderr } = await run(process.execPath, [CLI, 'migrate'], {
        env: { ...process.env, DATABASE_URL: databaseUrlFor(name) },
      });
      // Then stdout stays the migrations' news, and stderr says what the next start will do
      expect(stdout).toMatch(/^migrations up to date /);
      expect(stderr).toBe(
        `the read models are at rules version ${READ_MODELS_VERSION - 1}, this Errata's is ${READ_MODELS_VERSION}: ` +
          'the server rebuilds them from the log when it starts (its reports hold part of the history until then); ' +
          '`errata projections rebuild` does it now, with progress\n',
      );
    } finally {
      await db.deleteFrom('projection_checkpoint').execute();
    }
  });

  it('refuses, in one line, a database a newer Errata migrated (the CLI, and so the server, which migrates alike)', async () => {
    // Given a database with a migration this release does not have (an upgrade rolled back, an old instance restarted)
    await sql`INSERT INTO kysely_migration (name, timestamp) VALUES ('9999_next_release', now()::text)`.execute(
      db,
    );
    try {
      const refused = await run(process.execPath, [CLI, 'migrate'], {
        env: { ...process.env, DATABASE_URL: databaseUrlFor(name) },
      }).catch((error: { code: number; stdout: string; stderr: string }) => error);
      expect(refused).toMatchObject({ code: 2, stdout: '' });
      expect((refused as { stderr: string }).stderr).toBe(
        'errata: a newer Errata migrated this database (it has migration 9999_next_release, which this release ' +
          'does not): run the newer Errata on it, or this one on a database of its own\n',
      );
    } finally {
      await sql`DELETE FROM kysely_migration WHERE name = '9999_next_release'`.execute(db);
    }
  });

  it('reports an unreachable database as not ready', async () => {
    const nowhere = new Kysely<DB>({
      dialect: new PostgresDialect({
        pool: new Pool({
          connectionString: 'postgres://postgres@127.0.0.1:1/none',
          connectionTimeoutMillis: 1000,
        }),
      }),
    });
    const database = { db: nowhere, kind: 'postgres', pool: null } as unknown as Database;
    const readiness = await healthOf(database).readiness();
    await nowhere.destroy();
    expect(readiness).toMatchObject({ ready: false, database: 'unreachable' });
  });
});

/**
 * A DBA's bounds on Errata's database (ALTER DATABASE … SET statement_timeout / lock_timeout), far shorter than a
 * migration or a rebuild may take: the CLI and the migrations are not cut off by them; the server's pool keeps its own.
 */
describe('bounds set on the database', () => {
  const BOUND = '50ms';
  /** Kysely's migration lock (PostgresAdapter): every migration run takes it first, also with nothing to apply. */
  const MIGRATION_LOCK = '3853314791062309107';
  let database: TestDatabase;
  let admin: Client;

  beforeAll(async () => {
    database = await createTestDatabase(inject('templateDatabase'));
    // The test's own session takes no bound.
    admin = new Client({
      connectionString: database.url,
      options: '-c statement_timeout=0 -c lock_timeout=0',
    });
    await admin.connect();
    await admin.query(`ALTER DATABASE ${database.name} SET statement_timeout = '${BOUND}'`);
    await admin.query(`ALTER DATABASE ${database.name} SET lock_timeout = '${BOUND}'`);
  });
  afterAll(async () => {
    await admin?.end();
    await database?.drop();
  });

  /**
   * `work`'s end, once it has waited on a lock `hold` takes for well past the database's bound (or ended before):
   * `hold` is then released.
   */
  async function pastTheBound<T>(
    hold: () => Promise<() => Promise<unknown>>,
    work: () => Promise<T>,
  ): Promise<T> {
    const release = await hold();
    let ended = false;
    const done = work().finally(() => (ended = true));
    try {
      await until('a statement waiting past the bound, or its end', async () => {
        if (ended) return true;
        const { rows } = await admin.query<{ waiting: number }>(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'
              AND query_start < clock_timestamp() - interval '300 ms'`,
        );
        return rows[0]!.waiting > 0;
      });
    } finally {
      await release();
    }
    return done;
  }

  const migrationLock = async () => {
    await admin.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
    return () => admin.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`);
  };

  it('the CLI migrates, and runs its command, however long it waits', async () => {
    expect(await pastTheBound(migrationLock, () => runCli(database.url, 'migrate'))).toMatchObject({
      code: 0,
    });
    // A command's own statement waiting on a table locked meanwhile (as a server's long statement would)
    // (in a session of its own: in a transaction, pg_stat_activity would not change for this one)
    const tableLock = async () => {
      const locker = new Client({ connectionString: database.url, options: '-c statement_timeout=0' });
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE project IN ACCESS EXCLUSIVE MODE');
      return () => locker.query('ROLLBACK').finally(() => locker.end());
    };
    const listed = await pastTheBound(tableLock, () => runCli(database.url, 'projects', 'list'));
    expect(listed).toMatchObject({ code: 0, stderr: '' });
  });

  it("the server's migrations run however long they wait; its pool then bounds statements by ERRATA_PG_QUERY_TIMEOUT_MS, else by the database's", async () => {
    for (const [queryTimeoutMs, bound] of [
      [1_000, '1s'],
      [0, BOUND],
    ] as const) {
      const config = { databaseUrl: database.url, dataDir: '', poolSize: 1, queryTimeoutMs };
      const opened = await pastTheBound(migrationLock, () => openMigratedDatabase(config, () => undefined));
      try {
        const { rows } = await sql<{ statement_timeout: string }>`SHOW statement_timeout`.execute(opened.db);
        expect(rows).toEqual([{ statement_timeout: bound }]);
      } finally {
        await opened.destroy();
      }
    }
  });
});
