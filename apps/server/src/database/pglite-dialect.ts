import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';
import { timestamptzText } from './timestamps';

/**
 * Kysely over embedded PGlite. PGlite is one session, so the driver hands out its single connection to one
 * caller at a time: a transaction keeps it until commit or rollback, everyone else queues.
 */
export class PGliteDialect implements Dialect {
  constructor(private readonly pglite: PGlite) {}

  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite);
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}

class PGliteDriver implements Driver {
  private readonly connection: PGliteConnection;
  private queue: Promise<void> = Promise.resolve();
  private release: (() => void) | null = null;

  constructor(private readonly pglite: PGlite) {
    this.connection = new PGliteConnection(pglite);
  }

  async init(): Promise<void> {
    await this.pglite.waitReady;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.queue;
    let release!: () => void;
    this.queue = new Promise((resolve) => (release = resolve));
    await previous;
    this.release = release;
    return this.connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin'));
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    const release = this.release;
    this.release = null;
    release?.();
  }

  async destroy(): Promise<void> {
    await this.queue;
    if (!this.pglite.closed) await this.pglite.close();
  }
}

/**
 * A query parameter as PGlite is to send it. PGlite writes a `Date` with `toISOString`, which PostgreSQL cannot read
 * for years before 1 or after 9999 (pg writes them as PostgreSQL does): the same window then failed on the embedded
 * store only.
 */
const parameter = (value: unknown): unknown => (value instanceof Date ? timestamptzText(value) : value);

class PGliteConnection implements DatabaseConnection {
  constructor(private readonly pglite: PGlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // Parameterless text may hold several statements (migrations); only `exec` runs those.
    const result =
      query.parameters.length > 0
        ? await this.pglite.query<R>(query.sql, query.parameters.map(parameter))
        : (await this.pglite.exec(query.sql)).at(-1);
    const rows = (result?.rows ?? []) as R[];
    const affected = result?.affectedRows;
    return { rows, numAffectedRows: affected === undefined ? undefined : BigInt(affected) };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('Streaming queries are not supported on embedded PGlite');
  }
}
