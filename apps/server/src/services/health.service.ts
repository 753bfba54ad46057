import { Inject, Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { DATABASE, type Database } from '../database/database';
import { pendingMigrations } from '../database/migrations';

export interface Readiness {
  readonly ready: boolean;
  readonly store: Database['kind'];
  readonly database: 'reachable' | 'unreachable';
  readonly pendingMigrations: readonly string[];
}

@Injectable()
export class HealthService {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async readiness(): Promise<Readiness> {
    const store = this.database.kind;
    try {
      await sql`SELECT 1`.execute(this.database.db);
      const pending = await pendingMigrations(this.database.db);
      return { ready: pending.length === 0, store, database: 'reachable', pendingMigrations: pending };
    } catch {
      return { ready: false, store, database: 'unreachable', pendingMigrations: [] };
    }
  }
}
