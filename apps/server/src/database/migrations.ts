import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { isConnectionFailure } from './database-unavailable';

/** `migrations/` at the repository root; the same relative place from `src/` (tests) and `dist/` (runtime). */
export const MIGRATIONS_DIR = resolve(__dirname, '..', '..', '..', '..', 'migrations');

/** Plain `.sql` files, applied in name order, each in its own transaction. */
class SqlFileMigrationProvider implements MigrationProvider {
  constructor(private readonly dir: string) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(this.dir)).filter((file) => file.endsWith('.sql')).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      const text = await readFile(join(this.dir, file), 'utf8');
      migrations[file.replace(/\.sql$/, '')] = {
        up: async (db) => {
          await sql.raw(text).execute(db);
        },
      };
    }
    return migrations;
  }
}

// Migrations are typed against no schema on purpose: old ones must compile whatever the tables become.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function migrator(db: Kysely<any>, dir: string) {
  return new Migrator({ db, provider: new SqlFileMigrationProvider(dir) });
}

export class MigrationError extends Error {}

/** The database has migrations this release does not know: a newer Errata migrated it (a rolling upgrade). */
export class NewerDatabaseError extends MigrationError {}

/** Kysely's words for an applied migration that is not among this release's files. */
const UNKNOWN_APPLIED_MIGRATION = /previously executed migration (\S+) is missing/;

/** No migration could even start: the database did not answer (down, wrong host or port, unknown name). */
export class DatabaseUnreachableError extends Error {}

/** Applies every pending migration; returns the names applied now. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function migrateToLatest(db: Kysely<any>, dir = MIGRATIONS_DIR): Promise<string[]> {
  const { error, results = [] } = await migrator(db, dir).migrateToLatest();
  const failed = results.find((result) => result.status === 'Error');
  if (error || failed) {
    const cause = error instanceof Error ? error.message : String(error ?? '');
    if (failed === undefined && results.length === 0 && isConnectionFailure(error)) {
      throw new DatabaseUnreachableError(cause);
    }
    const newer = UNKNOWN_APPLIED_MIGRATION.exec(cause);
    if (failed === undefined && newer !== null) {
      throw new NewerDatabaseError(
        `a newer Errata migrated this database (it has migration ${newer[1]}, which this release does not): ` +
          'run the newer Errata on it, or this one on a database of its own',
      );
    }
    throw new MigrationError(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${cause}`);
  }
  return results.filter((result) => result.status === 'Success').map((result) => result.migrationName);
}

/** This release's last migration, read from `dir` once. */
const lastMigrations = new Map<string, Promise<string>>();
function lastMigrationOf(dir: string): Promise<string> {
  let last = lastMigrations.get(dir);
  if (last === undefined) {
    last = readdir(dir).then((files) =>
      files
        .filter((file) => file.endsWith('.sql'))
        .map((file) => file.replace(/\.sql$/, ''))
        .reduce((a, b) => (a > b ? a : b), ''),
    );
    lastMigrations.set(dir, last);
  }
  return last;
}

/**
 * The first migration applied to the database that this release does not have (a newer Errata migrated it since
 * this one started: a rolling upgrade, or this one left running), else null. Migrations apply in name order.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function newerAppliedMigration(db: Kysely<any>, dir = MIGRATIONS_DIR): Promise<string | null> {
  const last = await lastMigrationOf(dir);
  const { rows } = await sql<{ name: string }>`
    SELECT name FROM kysely_migration WHERE name > ${last} ORDER BY name LIMIT 1`.execute(db);
  return rows[0]?.name ?? null;
}

/** Names of migrations that exist in `dir` but are not applied to the database. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function pendingMigrations(db: Kysely<any>, dir = MIGRATIONS_DIR): Promise<string[]> {
  const all = await migrator(db, dir).getMigrations();
  return all.filter((migration) => !migration.executedAt).map((migration) => migration.name);
}
