import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { RULES_VERSION } from '@errata/domain';
import { sql } from 'kysely';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DATABASE, type Database } from '../database/database';
import { projectEvents } from '../projections/read-model.projection';
import { CheckpointRepository } from '../repositories/checkpoint.repository';
import { compareLogPositions, EventRepository, LOG_START } from '../repositories/event.repository';
import { ReadModelRepository } from '../repositories/read-model.repository';

export const READ_MODELS_PROJECTION = 'read-models';
/** Bumped with the rules: a checkpoint of another version means the read models are rebuilt from the log. */
export const READ_MODELS_VERSION = RULES_VERSION;
/** Advisory lock key: one active projector per database, however many Errata instances run. */
const PROJECTOR_LOCK = 0x4572_7261; // "Erra"
const BATCH_SIZE = 2_000;

export type ProgressListener = (projected: number) => void;

/**
 * Keeps the read models in step with the event log. Each batch reads events in (transaction id, position)
 * order below the oldest running transaction, writes the read models and moves the checkpoint with a
 * compare-and-set, all in one transaction: a crash or a competing instance can never skip or double-apply.
 */
@Injectable()
export class ProjectorService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Projector');
  private running = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private pendingWake = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DATABASE) private readonly database: Database,
    private readonly events: EventRepository,
    private readonly checkpoints: CheckpointRepository,
    private readonly readModels: ReadModelRepository,
  ) {}

  onApplicationBootstrap(): void {
    this.running = true;
    this.loop = this.run();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
  }

  /** New events were committed: project them soon instead of at the next poll. */
  wake(): void {
    this.pendingWake = true;
    this.wakeUp?.();
  }

  /** Projects one batch; returns how many events it applied (0 = caught up, or another instance holds the lock). */
  async projectBatch(limit = BATCH_SIZE): Promise<number> {
    return this.database.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{
        locked: boolean;
      }>`SELECT pg_try_advisory_xact_lock(${PROJECTOR_LOCK}) AS locked`.execute(trx);
      if (!rows[0]?.locked) return 0;
      let checkpoint = await this.checkpoints.get(trx, READ_MODELS_PROJECTION);
      if (!checkpoint) {
        await this.checkpoints.ensure(trx, READ_MODELS_PROJECTION, READ_MODELS_VERSION);
        checkpoint = { version: READ_MODELS_VERSION, position: LOG_START };
      } else if (checkpoint.version !== READ_MODELS_VERSION) {
        this.logger.log(
          `rules version changed to ${READ_MODELS_VERSION}: rebuilding the read models from the log`,
        );
        await this.readModels.truncate(trx);
        await this.checkpoints.reset(trx, READ_MODELS_PROJECTION, READ_MODELS_VERSION);
        checkpoint = { version: READ_MODELS_VERSION, position: LOG_START };
      }
      const batch = await this.events.readAfter(trx, checkpoint.position, limit);
      const last = batch.at(-1);
      if (!last) return 0;
      const changes = projectEvents(batch);
      await this.readModels.upsertToolCalls(trx, changes.toolCalls);
      await this.readModels.upsertAgentRuns(trx, changes.agentRuns);
      await this.readModels.upsertEscalations(trx, changes.escalations);
      await this.readModels.upsertSubagentReports(trx, changes.subagentReports);
      const moved = await this.checkpoints.compareAndSet(
        trx,
        READ_MODELS_PROJECTION,
        READ_MODELS_VERSION,
        checkpoint.position,
        last,
      );
      if (!moved) throw new Error('projection checkpoint moved under this projector; rolling back its batch');
      return batch.length;
    });
  }

  /** Projects until nothing is left below the snapshot horizon; returns how many events it applied. */
  async catchUp(onProgress?: ProgressListener): Promise<number> {
    let total = 0;
    for (let applied = await this.projectBatch(); applied > 0; applied = await this.projectBatch()) {
      total += applied;
      onProgress?.(total);
    }
    return total;
  }

  /**
   * Waits until the read models include every event committed before the call, projecting here or letting
   * whichever instance holds the projector lock do it. Returns how many events this call applied.
   */
  async settle(onProgress?: ProgressListener, timeoutMs = 60_000): Promise<number> {
    const target = await this.events.lastPosition();
    const deadline = Date.now() + timeoutMs;
    let applied = 0;
    for (;;) {
      applied += await this.catchUp((done) => onProgress?.(applied + done));
      const checkpoint = await this.checkpoints.get(this.database.db, READ_MODELS_PROJECTION);
      const reached =
        target === null ||
        (checkpoint?.version === READ_MODELS_VERSION &&
          compareLogPositions(checkpoint.position, target) >= 0);
      if (reached) return applied;
      if (Date.now() > deadline)
        throw new Error(`read models did not catch up with the log within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Empties the read models and replays the whole log into them. */
  async rebuild(onProgress?: ProgressListener): Promise<number> {
    await this.database.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${PROJECTOR_LOCK})`.execute(trx);
      await this.checkpoints.ensure(trx, READ_MODELS_PROJECTION, READ_MODELS_VERSION);
      await this.readModels.truncate(trx);
      await this.checkpoints.reset(trx, READ_MODELS_PROJECTION, READ_MODELS_VERSION);
    });
    return this.settle(onProgress);
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        await this.catchUp();
      } catch (error) {
        this.logger.error(
          `projection batch failed, retrying: ${error instanceof Error ? error.message : error}`,
        );
      }
      await this.sleep(this.config.projectionPollMs);
    }
  }

  private async sleep(ms: number): Promise<void> {
    if (this.pendingWake || !this.running) {
      this.pendingWake = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wakeUp = null;
    this.pendingWake = false;
  }
}
