import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Logger } from '@nestjs/common';
import { Kysely, PostgresDialect } from 'kysely';
import { Pool } from 'pg';
import { describeDatabaseUrl, type AppConfig } from '../config/app-config';
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
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return {
      db,
      kind: 'postgres',
      description: `PostgreSQL at ${describeDatabaseUrl(config.databaseUrl)}`,
      pool,
      destroy: () => db.destroy(),
    };
  }
  const dataDir = join(config.dataDir, 'pgdata');
  mkdirSync(dataDir, { recursive: true });
  const db = new Kysely<DB>({ dialect: new PGliteDialect(new PGlite(dataDir)) });
  return {
    db,
    kind: 'pglite',
    description: `embedded PGlite in ${dataDir}`,
    pool: null,
    destroy: () => db.destroy(),
  };
}
