import { Inject, Injectable, Logger } from '@nestjs/common';
import { sql } from 'kysely';
import { DATABASE, type Database } from '../database/database';
import { isDatabaseUnavailable } from '../database/database-unavailable';
import { pendingMigrations } from '../database/migrations';
import { CheckpointRepository } from '../repositories/checkpoint.repository';
import { EventRepository, LOG_START } from '../repositories/event.repository';
import { READ_MODELS_PROJECTION } from '../projections/projection-logs';
import { ProjectorService, READ_MODELS_VERSION } from './projector.service';

export interface Readiness {
  readonly ready: boolean;
  readonly store: Database['kind'];
  /** `failing`: it answers, but the checks' statements fail (a statement timeout, for one); the log says why. */
  readonly database: 'reachable' | 'unreachable' | 'failing';
  readonly pendingMigrations: readonly string[];
  /** Records the projector could not apply and set aside (`projection_skip`): the reports go on without them. */
  readonly setAsideRecords: number | null;
  /**
   * How far the reports are behind the log: seconds since the first event they do not include yet was received
   * (0 when they include every event; null when the database cannot say).
   */
  readonly projectionLagSeconds: number | null;
  /** A rebuild has not yet projected the log it began with: the reports hold part of the history. */
  readonly rebuilding: boolean | null;
}

@Injectable()
export class HealthService {
  private readonly logger = new Logger('Health');

  constructor(
    @Inject(DATABASE) private readonly database: Database,
    private readonly checkpoints: CheckpointRepository,
    private readonly events: EventRepository,
    private readonly projector: ProjectorService,
  ) {}

  async readiness(): Promise<Readiness> {
    const store = this.database.kind;
    try {
      await sql`SELECT 1`.execute(this.database.db);
      const pending = await pendingMigrations(this.database.db);
      const migrated = pending.length === 0;
      return {
        ready: migrated,
        store,
        database: 'reachable',
        pendingMigrations: pending,
        // projection_skip and the checkpoints are there once the migrations are applied.
        setAsideRecords: migrated ? await this.checkpoints.skippedCount(this.database.db) : null,
        projectionLagSeconds: migrated ? await this.projectionLag() : null,
        // The projector's answer: settings of this server's that differ from the read models' count before its
        // first look, as they do for the fix rounds.
        rebuilding: migrated ? await this.projector.rebuilding() : null,
      };
    } catch (error) {
      const unreachable = isDatabaseUnavailable(error);
      if (!unreachable) this.logger.warn(`readiness check failed: ${(error as Error).message}`);
      return {
        ready: false,
        store,
        database: unreachable ? 'unreachable' : 'failing',
        pendingMigrations: [],
        setAsideRecords: null,
        projectionLagSeconds: null,
        rebuilding: null,
      };
    }
  }

  /**
   * A checkpoint of older rules is rebuilt from the log's start: the reports wait for all of it. One of newer rules
   * is a newer Errata's, which projects the reports this one serves: they are where it stands.
   */
  private async projectionLag(): Promise<number> {
    const checkpoint = await this.checkpoints.get(this.database.db, READ_MODELS_PROJECTION);
    const position =
      checkpoint !== null && checkpoint.version >= READ_MODELS_VERSION ? checkpoint.position : LOG_START;
    return Math.round((await this.events.secondsWaitingAfter(this.database.db, position)) ?? 0);
  }
}
