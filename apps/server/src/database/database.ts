import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Logger } from '@nestjs/common';
import { Kysely, PostgresDialect } from 'kysely';
import { Pool } from 'pg';
import { describeDatabaseUrl, type AppConfig } from '../config/app-config';
import { DatabaseUnreachableError, migrateToLatest } from './migrations';
import { PGliteDialect } from './pglite-dialect';
import type { DB } from './schema';

const logger = new Logger('Database');

export const DATABASE = Symbol('Database');

export interface Database {
  readonly db: Kysely<DB>;
  readonly kind: 'postgres' | 'pglite';
  /** For the startup line: where the data lives, without secrets. */
  readonly description: string;
  /** The pg pool, when there is one (COPY and other raw-client work). */
  readonly pool: Pool | null;
  /** Settles once an embedded store is open; rejects when it cannot be (a damaged data directory). */
  readonly opened: Promise<void>;
  destroy(): Promise<void>;
}

export function openDatabase(config: Pick<AppConfig, 'databaseUrl' | 'dataDir' | 'poolSize'>): Database {
  if (config.databaseUrl) {
    const pool = new Pool({
      connectionString: config.databaseUrl,
      max: config.poolSize,
      // A request that cannot get a connection soon is answered 503 + Retry-After, not queued forever.
      connectionTimeoutMillis: 10_000,
      // A forgotten open transaction would hold back pg_snapshot_xmin and stall every projection.
      options: '-c idle_in_transaction_session_timeout=60000',
    });
    // An idle pooled connection that PostgreSQL terminates (a restart, an admin command, a network cut) is
    // dropped by the pool, which then emits 'error': unhandled, that would end the whole process.
    pool.on('error', (error) => logger.warn(`an idle database connection was closed: ${error.message}`));
    // A connection in use (in a transaction, a COPY, between two statements) emits 'error' on itself, where the
    // pool does not listen: the statement in progress or the next one fails with the error and is answered for
    // there, and the pool drops the connection when it comes back.
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return {
      db,
      kind: 'postgres',
      description: `PostgreSQL at ${describeDatabaseUrl(config.databaseUrl)}`,
      pool,
      opened: Promise.resolve(),
      destroy: () => db.destroy(),
    };
  }
  const dataDir = join(config.dataDir, 'pgdata');
  // PGlite writes its files readable and writable by everyone (0666): only its directory keeps other local users out
  // of the keys' hashes and the event log, as PostgreSQL's own 0700 data directory does; also a store an earlier
  // version created open. ERRATA_DATA_DIR itself may be the user's and is left as it is.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  const unlock = lockEmbeddedStore(dataDir);
  const pglite = new PGlite(dataDir);
  const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite) });
  return {
    db,
    kind: 'pglite',
    description: `embedded PGlite in ${dataDir}`,
    pool: null,
    opened: pglite.waitReady,
    destroy: () => db.destroy().finally(unlock),
  };
}

export class DatabaseInUseError extends Error {}

/**
 * One process at a time may open an embedded store: PGlite has no server to share it, and a second process (the CLI
 * while Errata runs) would write to a copy the first one overwrites; a key it creates would be lost without a word.
 * A lock file names the process holding it (its pid, and where the system says it, which boot and when it started);
 * one left by a process that has died is taken over, also when its pid now belongs to another process (a reboot).
 */
function lockEmbeddedStore(dataDir: string): () => void {
  const lockFile = `${dataDir}.lock`;
  for (;;) {
    try {
      writeFileSync(lockFile, `${process.pid} ${processIdentity(process.pid) ?? ''}`.trim(), { flag: 'wx' });
      return () => rmSync(lockFile, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const [pidText = '', identity = null] = readFileSync(lockFile, 'utf8').trim().split(' ');
    const holder = Number(pidText);
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isHolding(holder, identity)) {
      throw new DatabaseInUseError(
        `the embedded database in ${dataDir} is open in process ${holder} (an Errata server?): only one process ` +
          'can use it at a time. Stop that process first, or use PostgreSQL (DATABASE_URL). If that process is no ' +
          `Errata, ${lockFile} was left behind: delete it.`,
      );
    }
    rmSync(lockFile, { force: true }); // left by a process that is gone
  }
}

/** The process `pid` is alive and, when the lock says which one it was, the same one. */
function isHolding(pid: number, identity: string | null): boolean {
  if (!isAlive(pid)) return false;
  const now = identity === null ? null : processIdentity(pid);
  return now === null || now === identity;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Which process `pid` is, across pid reuse: the boot and its start time (Linux `/proc`); null where the system does
 * not say.
 */
export function processIdentity(pid: number): string | null {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, whose parentheses may hold anything: field 22, the start time, is the 20th.
    const startTime = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return startTime === undefined ? null : `${boot}/${startTime}`;
  } catch {
    return null;
  }
}

/**
 * The database, opened and migrated (`onApplied` hears the names of the migrations applied now); closed again when
 * that fails. A database that does not answer is said to be so, with where it was looked for.
 */
export async function openMigratedDatabase(
  config: Pick<AppConfig, 'databaseUrl' | 'dataDir' | 'poolSize'>,
  onApplied: (names: readonly string[]) => void,
): Promise<Database> {
  const database = openDatabase(config);
  try {
    await database.opened.catch((error: unknown) => {
      throw new EmbeddedStoreDamagedError(
        `cannot open the ${database.description}: ${error instanceof Error ? error.message : String(error)} ` +
          '(its files are damaged or not a PGlite store: restore the directory from a backup, or move it away to ' +
          'start with an empty store)',
      );
    });
    const applied = await migrateToLatest(database.db);
    if (applied.length > 0) onApplied(applied);
    return database;
  } catch (error) {
    await database.destroy().catch(() => undefined); // a store that never opened may not close either
    if (!(error instanceof DatabaseUnreachableError)) throw error;
    throw new DatabaseUnreachableError(
      `cannot reach ${database.description}: ${error.message} (is it running, and is DATABASE_URL right?)`,
    );
  }
}

/** The embedded store's directory holds files PGlite cannot open. */
export class EmbeddedStoreDamagedError extends Error {}
