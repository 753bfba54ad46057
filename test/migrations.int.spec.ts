import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Client, Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../apps/server/src/database/database';
import { MIGRATIONS_DIR, pendingMigrations } from '../apps/server/src/database/migrations';
import type { DB } from '../apps/server/src/database/schema';
import { CheckpointRepository } from '../apps/server/src/repositories/checkpoint.repository';
import { EventRepository } from '../apps/server/src/repositories/event.repository';
import { HealthService } from '../apps/server/src/services/health.service';
import {
  READ_MODELS_PROJECTION,
  READ_MODELS_VERSION,
  standaloneProjector,
} from '../apps/server/src/services/projector.service';
import { loadConfig } from '../apps/server/src/config/app-config';
import { adminDatabaseUrl, databaseUrlFor } from './support/postgres';

const CLI = join(__dirname, '../apps/server/dist/cli/errata.js');
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
