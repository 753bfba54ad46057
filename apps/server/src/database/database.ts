import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Logger } from '@nestjs/common';
import { Kysely, PostgresDialect } from 'kysely';
import { Client, Pool } from 'pg';
import { describeDatabaseUrl, MAX_TIMER_MS, type AppConfig } from '../config/app-config';
import { stoppingAbandonedReads } from './abandoned-reads';
import { DatabaseUnreachableError, migrateToLatest } from './migrations';
import { PGliteDialect } from './pglite-dialect';
import { PROJECTIONS } from '../projections/projection-logs';
import { RestoredLogRepository } from '../repositories/restored-log.repository';
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

type DatabaseConfig = Pick<AppConfig, 'databaseUrl' | 'dataDir' | 'poolSize' | 'queryTimeoutMs'>;

/**
 * How long a statement may run or wait: the server's bound (`queryTimeoutMs`; 0 leaves the role's or the database's
 * `statement_timeout`), or `unbounded`, whatever the role or the database sets: the CLI and the migrations, whose
 * statements (a rebuild, a prune, an index over the whole log) may take minutes, watched by a person who can stop
 * them, as pg_dump sets its own session.
 */
export type StatementBound = 'server' | 'unbounded';

/**
 * The database of `config`. On PostgreSQL, a statement still running after `queryTimeoutMs` (unless 0) is canceled
 * by PostgreSQL itself (`statement_timeout`, error 57014: its locks and its backend freed, the connection kept),
 * which is answered 503 + Retry-After. One whose answer has still not come `STALL_GRACE_MS` later (a stalled network
 * path, over which PostgreSQL's error cannot come) fails with pg's 'Query read timeout', answered the same way, and
 * its connection is closed (`StallSafeClient`). Embedded PGlite has neither bound: it runs statements in this process.
 */
export function openDatabase(config: DatabaseConfig, statementBound: StatementBound = 'server'): Database {
  if (config.databaseUrl) {
    const bound = statementBound === 'server' && config.queryTimeoutMs > 0 ? config.queryTimeoutMs : null;
    // A pg client-side timeout only stops waiting: PostgreSQL would run the statement to its end, holding its locks,
    // its backend and the CPU and I/O it takes. statement_timeout has PostgreSQL cancel it; set at connect time, it
    // overrides one set on the role or the database (the server without a bound leaves theirs).
    // idle_in_transaction_session_timeout is always Errata's own, never the role's: it bounds only how long Errata
    // leaves a transaction idle between two statements, never how long a statement runs.
    // DateStyle: pg reads times only in PostgreSQL's ISO output; under a role's or database's 'SQL, DMY' it read the
    // time series' bucket starts as no instant, and every point came out empty.
    const sessionSettings = ['idle_in_transaction_session_timeout=60000', 'DateStyle=ISO'];
    if (bound !== null) sessionSettings.push(`statement_timeout=${bound}`);
    // A role's or database's bound would cut a rebuild or a migration off after its first minutes (statement_timeout),
    // or a statement of theirs that waits a moment for a lock the server holds (lock_timeout).
    if (statementBound === 'unbounded') sessionSettings.push('statement_timeout=0', 'lock_timeout=0');
    const pool = new Pool({
      connectionString: config.databaseUrl,
      max: config.poolSize,
      // A request that cannot get a connection soon is answered 503 + Retry-After, not queued forever.
      connectionTimeoutMillis: 10_000,
      // A network path that stalls without closing (a partition, a failover, a firewall dropping packets) brings no
      // error, not even PostgreSQL's cancel: without a bound, a request or the projector waits on it for ever. Later
      // than statement_timeout, so that a statement that is only slow ends in PostgreSQL's cancel, on a connection
      // kept. (Never past the longest delay a Node timer takes, which is also the largest statement_timeout.)
      query_timeout: bound === null ? undefined : Math.min(bound + STALL_GRACE_MS, MAX_TIMER_MS),
      Client: StallSafeClient,
      // An idle pooled connection whose peer is gone is found out by the system's probes, not only when used.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      // A forgotten open transaction would hold back pg_snapshot_xmin and stall every projection.
      options: sessionSettings.map((setting) => `-c ${setting}`).join(' '),
    });
    // An idle pooled connection that PostgreSQL terminates (a restart, an admin command, a network cut) is
    // dropped by the pool, which then emits 'error': unhandled, that would end the whole process.
    pool.on('error', (error) => logger.warn(`an idle database connection was closed: ${error.message}`));
    // A connection in use (in a transaction, a COPY, between two statements) emits 'error' on itself, where the
    // pool does not listen: the statement in progress or the next one fails with the error and is answered for
    // there, and the pool drops the connection when it comes back.
    pool.on('connect', (client) => client.on('error', () => undefined));
    const databaseUrl = config.databaseUrl;
    const db = new Kysely<DB>({
      dialect: stoppingAbandonedReads(new PostgresDialect({ pool }), (pid) =>
        cancelStatement(databaseUrl, pid),
      ),
    });
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
  // PGlite runs a statement in this process, to its end: an abandoned read only stops before its next one.
  const db = new Kysely<DB>({ dialect: stoppingAbandonedReads(new PGliteDialect(pglite), null) });
  return {
    db,
    kind: 'pglite',
    description: `embedded PGlite in ${dataDir}`,
    pool: null,
    opened: pglite.waitReady,
    destroy: () => db.destroy().finally(unlock),
  };
}

/**
 * Cancels the statement running on backend `pid` (one of a read whose caller went away), from a connection of its
 * own: the pool's may all be in use, by reads waiting to be canceled among others. A cancel that fails leaves the
 * statement to run on until statement_timeout (ERRATA_PG_QUERY_TIMEOUT_MS), as before: said, not thrown.
 */
async function cancelStatement(databaseUrl: string, pid: number): Promise<void> {
  const client = new Client({
    connectionString: databaseUrl,
    connectionTimeoutMillis: CANCEL_TIMEOUT_MS,
    query_timeout: CANCEL_TIMEOUT_MS,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT pg_cancel_backend($1)', [pid]);
  } catch (error) {
    logger.warn(
      `could not cancel the statement of a read whose client went away (it runs until ERRATA_PG_QUERY_TIMEOUT_MS): ${
        error instanceof Error ? error.message : String(error)
      }`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** How long a cancel may take: its read's connection waits for it before anything else is sent on it. */
const CANCEL_TIMEOUT_MS = 5_000;

/**
 * How much longer than PostgreSQL's statement_timeout pg's client waits for an answer: time for PostgreSQL's cancel
 * and its error to come back over a working network path, so that the client-side timeout is only a stall's.
 */
const STALL_GRACE_MS = 1_000;

/** pg's error for a statement whose answer did not come within `query_timeout`. */
const QUERY_READ_TIMEOUT = 'Query read timeout';

/**
 * pg's client, closing its connection when a statement's answer does not come within `query_timeout`. pg answers
 * the caller with an error but keeps the connection, the statement still in progress on it, and Kysely hands it
 * back to the pool as sound: every later statement on it would queue behind an answer that may never come (a
 * stalled network path) and time out in turn, after the path is back too. Closed, it is dropped by the pool when
 * released (it is no longer queryable), the statements queued on it fail with 'Connection terminated', and the next
 * request opens a fresh connection.
 */
class StallSafeClient extends Client {
  override query(...args: unknown[]): never {
    const result: unknown = (Client.prototype.query as (...args: unknown[]) => unknown).apply(this, args);
    if (isPromise(result))
      result.then(undefined, (error: unknown) => {
        if (error instanceof Error && error.message === QUERY_READ_TIMEOUT) this.connection.stream.destroy();
      });
    return result as never;
  }
}

function isPromise(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

export class DatabaseInUseError extends Error {}

/**
 * A holder marks its lock as still held this often (its modification time); a lock of another host left unmarked for
 * LOCK_STALE_MS was left behind. The bound is long: PGlite runs statements in the holder's event loop, and a long
 * one (a migration over a large store) holds back the mark meanwhile.
 */
export const LOCK_REFRESH_MS = 15_000;
export const LOCK_STALE_MS = 120_000;

/**
 * One process at a time may open an embedded store: PGlite has no server to share it, and a second process (the CLI
 * while Errata runs) would write to a copy the first one overwrites; a key it creates would be lost without a word.
 * A lock file names the process holding it (its pid, where the system says it which boot and when it started, and
 * the host name); one left by a process that has died is taken over, also when its pid now belongs to another process
 * (a reboot). A lock of another host name is another container's (or machine's, on a shared volume): its pids are not
 * ours to look up (pid 1 there is pid 1 here), so it is refused while its holder marks it held, and taken over once
 * it has not for LOCK_STALE_MS (the container was killed, and its volume given to a new one).
 */
export function lockEmbeddedStore(dataDir: string, refreshMs = LOCK_REFRESH_MS): () => void {
  const lockFile = `${dataDir}.lock`;
  const host = encodeURIComponent(hostname());
  for (;;) {
    try {
      writeFileSync(lockFile, `${process.pid} ${processIdentity(process.pid) ?? '-'} ${host}`, {
        flag: 'wx',
      });
      const mark = setInterval(() => {
        try {
          const now = new Date();
          utimesSync(lockFile, now, now);
        } catch {
          // Gone (taken over as left behind after a long stall): the next start says so, nothing to do here.
        }
      }, refreshMs);
      mark.unref();
      return () => {
        clearInterval(mark);
        rmSync(lockFile, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let markedAgoMs: number;
    let content: string;
    try {
      markedAgoMs = Date.now() - statSync(lockFile).mtimeMs;
      content = readFileSync(lockFile, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // released meanwhile
      throw error;
    }
    // Locks written before the host name was recorded have one or two fields: this host's.
    const [pidText = '', identityText = '-', holderHost = host] = content.trim().split(' ');
    const holder = Number(pidText);
    const identity = identityText === '-' ? null : identityText;
    if (holderHost !== host) {
      if (markedAgoMs < LOCK_STALE_MS) {
        throw new DatabaseInUseError(
          `the embedded database in ${dataDir} is held by process ${holder} on host ${decodeURIComponent(holderHost)} ` +
            `(another container?), which marked it held ${Math.max(0, Math.round(markedAgoMs / 1000))} s ago: only ` +
            'one process can use it at a time. Stop that process first, or use PostgreSQL (DATABASE_URL). If no ' +
            `Errata runs there, the lock is taken over once unmarked for ${LOCK_STALE_MS / 1000} s, or delete ` +
            `${lockFile}.`,
        );
      }
    } else if (
      Number.isInteger(holder) &&
      holder > 0 &&
      holder !== process.pid &&
      isHolding(holder, identity)
    ) {
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
  config: DatabaseConfig,
  onApplied: (names: readonly string[]) => void,
  statementBound: StatementBound = 'server',
  onRenumbered: (line: string) => void = (line) => logger.log(line),
): Promise<Database> {
  // Migrations are bound neither by ERRATA_PG_QUERY_TIMEOUT_MS nor by the role's or the database's bound: one may
  // build an index over the whole event log for minutes. On PostgreSQL they have a pool of their own, closed once
  // they are done, and what follows runs with `statementBound` (the embedded store has no bound to change).
  const reopened = config.databaseUrl !== null && statementBound !== 'unbounded';
  const database = openDatabase(config, 'unbounded');
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
    await renumberRestoredLog(database.db, onRenumbered);
  } catch (error) {
    await database.destroy().catch(() => undefined); // a store that never opened may not close either
    if (!(error instanceof DatabaseUnreachableError)) throw error;
    throw new DatabaseUnreachableError(
      `cannot reach ${database.description}: ${error.message} (is it running, and is DATABASE_URL right?)`,
    );
  }
  if (!reopened) return database;
  await database.destroy();
  return openDatabase(config, statementBound);
}

/**
 * A database restored from a dump of another PostgreSQL server holds log positions (transaction ids) that server
 * assigned, possibly far above this one's counter: the projector would never read them, and would never look back at
 * the events this server numbers below its checkpoint. Renumbered before anything reads or writes the log, with the
 * migrations' unbounded statements (it rewrites every record once), and said.
 */
async function renumberRestoredLog(db: Kysely<DB>, say: (line: string) => void): Promise<void> {
  const restored = new RestoredLogRepository();
  if (!(await restored.holdsForeignPositions(db))) return;
  const moved = await db.transaction().execute((trx) => restored.renumber(trx, PROJECTIONS));
  if (moved.projections === 0) return;
  say(
    'the event log holds transaction ids another PostgreSQL server assigned (a database restored from its dump): ' +
      `renumbered ${moved.events} events and ${moved.spanEdges} span edges, and the projection checkpoints, ` +
      "into this server's order",
  );
}

/** The embedded store's directory holds files PGlite cannot open. */
export class EmbeddedStoreDamagedError extends Error {}
