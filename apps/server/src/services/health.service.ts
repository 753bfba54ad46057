import { Inject, Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { DATABASE, type Database } from '../database/database';
import { pendingMigrations } from '../database/migrations';
import { CheckpointRepository } from '../repositories/checkpoint.repository';

export interface Readiness {
  readonly ready: boolean;
  readonly store: Database['kind'];
  readonly database: 'reachable' | 'unreachable';
  readonly pendingMigrations: readonly string[];
  /** Records the projector could not apply and set aside (`projection_skip`): the reports go on without them. */
  readonly setAsideRecords: number | null;
}

@Injectable()
export class HealthService {
  constructor(
    @Inject(DATABASE) private readonly database: Database,
    private readonly checkpoints: CheckpointRepository,
  ) {}

  async readiness(): Promise<Readiness> {
    const store = this.database.kind;
    try {
      await sql`SELECT 1`.execute(this.database.db);
      const pending = await pendingMigrations(this.database.db);
      // projection_skip exists once the migrations are applied.
      const setAside = pending.length === 0 ? await this.checkpoints.skippedCount(this.database.db) : null;
      return {
        ready: pending.length === 0,
        store,
        database: 'reachable',
        pendingMigrations: pending,
        setAsideRecords: setAside,
      };
    } catch {
      return { ready: false, store, database: 'unreachable', pendingMigrations: [], setAsideRecords: null };
    }
  }
}
