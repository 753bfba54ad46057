import { AsyncLocalStorage } from 'node:async_hooks';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

/**
 * The caller a read is run for, as a signal aborted when it stops waiting for the answer (its HTTP client
 * disconnected). Set once per read, where the read takes its place among ERRATA_MAX_CONCURRENT_READS (`ReadAdmitted`,
 * the MCP endpoint's read tools), and read by the database driver below for every statement run within it: the
 * controllers, services and repositories in between carry nothing.
 */
const readCaller = new AsyncLocalStorage<AbortSignal>();

/** Runs `read` (and every statement it runs, in any transaction) for a caller that is gone once `callerGone` aborts. */
export function readFor<T>(callerGone: AbortSignal, read: () => T): T {
  return readCaller.run(callerGone, read);
}

/**
 * A read's statement refused, or cut off by the cancel below, because its caller went away: the answer has nobody to
 * go to. Not a failure of Errata's or the database's (not a statement timeout, though PostgreSQL's error for the
 * cancel is the same 57014): the caller's layer answers it as nobody's request (REST's 499), logging nothing.
 */
export class CallerGoneError extends Error {
  constructor(cause?: unknown) {
    super('the client went away: its read was stopped', { cause });
    this.name = 'CallerGoneError';
  }
}

/** Stops the statement running on the database session whose backend pid is `pid`; never rejects. */
export type StatementCanceler = (pid: number) => Promise<void>;

/**
 * `dialect`, with reads that stop once their caller is gone (`readFor`). A statement running when the caller goes is
 * canceled on the database (`cancel`: pg_cancel_backend from a connection of its own), and one not yet sent is never
 * sent; the read then fails with `CallerGoneError`, its transaction is rolled back as after any failure, and its
 * connection goes back to the pool as sound: PostgreSQL cancels a statement, not the session. Nothing more is sent on
 * that connection, not even the ROLLBACK, until the cancel has reached PostgreSQL: a cancel arriving later would
 * cut off whatever ran there then, the ROLLBACK or another request's statement. Without `cancel` (embedded PGlite,
 * which runs a statement in this process to its end) a read only stops before its next statement.
 */
export function stoppingAbandonedReads(dialect: Dialect, cancel: StatementCanceler | null): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new CallerBoundDriver(dialect.createDriver(), cancel),
    createIntrospector: (db: Kysely<unknown>) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
  };
}

/** The database backend of each connection (`pg_backend_pid()`), looked up once per connection. */
const backendPids = new WeakMap<DatabaseConnection, number>();

/** Savepoints are not passed on (Errata has none; Kysely then says the driver has none, as PGlite's). */
class CallerBoundDriver implements Driver {
  constructor(
    private readonly driver: Driver,
    private readonly cancel: StatementCanceler | null,
  ) {}

  init(): Promise<void> {
    return this.driver.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.driver.acquireConnection();
    // Only a read's connection may have to be canceled: the projector's, ingest's and the CLI's make no extra query.
    if (this.cancel !== null && readCaller.getStore() !== undefined && !backendPids.has(connection)) {
      try {
        const { rows } = await connection.executeQuery<{ pid: number }>(
          CompiledQuery.raw('SELECT pg_backend_pid() AS pid'),
        );
        backendPids.set(connection, rows[0]!.pid);
      } catch (error) {
        await this.driver.releaseConnection(connection);
        throw error;
      }
    }
    return new CallerBoundConnection(connection, this.cancel);
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.driver.beginTransaction(innerOf(connection), settings);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await settled(connection);
    return this.driver.commitTransaction(innerOf(connection));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await settled(connection);
    return this.driver.rollbackTransaction(innerOf(connection));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await settled(connection);
    return this.driver.releaseConnection(innerOf(connection));
  }

  destroy(): Promise<void> {
    return this.driver.destroy();
  }
}

/** One use of a pooled connection (from acquire to release), whose statements stop when their read's caller goes. */
class CallerBoundConnection implements DatabaseConnection {
  /** The cancel sent for a statement on this connection, once settled: nothing else is sent before. */
  cancelling: Promise<void> | null = null;

  constructor(
    readonly connection: DatabaseConnection,
    private readonly cancel: StatementCanceler | null,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const callerGone = readCaller.getStore();
    if (callerGone === undefined) return this.connection.executeQuery<R>(query);
    if (callerGone.aborted) throw new CallerGoneError();
    const cancel = () => {
      const pid = backendPids.get(this.connection);
      if (this.cancel !== null && pid !== undefined) this.cancelling ??= this.cancel(pid);
    };
    callerGone.addEventListener('abort', cancel, { once: true });
    try {
      return await this.connection.executeQuery<R>(query);
    } catch (error) {
      // Whatever stopped it (the cancel's 57014 mostly), nobody waits for this read any more.
      throw callerGone.aborted ? new CallerGoneError(error) : error;
    } finally {
      callerGone.removeEventListener('abort', cancel);
      await this.cancelling;
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.connection.streamQuery<R>(query, chunkSize);
  }
}

const innerOf = (connection: DatabaseConnection): DatabaseConnection =>
  connection instanceof CallerBoundConnection ? connection.connection : connection;

const settled = async (connection: DatabaseConnection): Promise<void> => {
  if (connection instanceof CallerBoundConnection) await connection.cancelling;
};
