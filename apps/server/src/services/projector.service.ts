import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { RULES_VERSION } from '@errata/domain';
import { sql, type Kysely, type Transaction } from 'kysely';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DATABASE, type Database } from '../database/database';
import { isDatabaseUnavailable } from '../database/database-unavailable';
import { newerAppliedMigration } from '../database/migrations';
import type { DB } from '../database/schema';
import { PROJECTIONS, READ_MODELS_PROJECTION, SPAN_EDGES_PROJECTION } from '../projections/projection-logs';
import { projectEvents } from '../projections/read-model.projection';
import { contributionChanges } from '../projections/contribution-changes';
import { traceContributions } from '../projections/trace-contributions';
import { CheckpointRepository } from '../repositories/checkpoint.repository';
import {
  compareLogPositions,
  EventRepository,
  LOG_START,
  type LogPosition,
} from '../repositories/event.repository';
import { ReadModelRepository } from '../repositories/read-model.repository';
import { RollupRepository } from '../repositories/rollup.repository';
import { StatisticsRepository } from '../repositories/statistics.repository';
import { traceKey, type TraceRef } from '../repositories/trace-ref';
import { TraceItemsRepository } from '../repositories/trace-items.repository';
import { derivationChanges, derivationOf, type DerivationSettings } from '../projections/derivation-settings';
import { IngestActivity } from './ingest-activity';
import { Poller } from './poller';

/** Bumped with the rules: a checkpoint of another version means the read models are rebuilt from the log. */
export const READ_MODELS_VERSION = RULES_VERSION;
/** Advisory lock key: one active projector per database, however many Errata instances run. */
export const PROJECTOR_LOCK = 0x4572_7261; // "Erra"
const BATCH_SIZE = 2_000;
/** How often a rebuild says how far it got. */
const REBUILD_LOG_INTERVAL_MS = 10_000;
/**
 * When this many records right before a failing one in the log were all set aside, the projector stops setting aside:
 * when everything fails, the cause is Errata's own code or database, not the records, and retrying is what is left.
 * Poison records among good ones (a rebuild replaying a thousand set aside over months) never come in such a row.
 */
const MAX_SKIPS_IN_A_ROW = 100;
/**
 * PostgreSQL error classes a record can cause: a value out of range or malformed (22), a constraint it breaks (23),
 * a row over a limit, such as an index row over 2,704 bytes (54).
 */
const RECORD_PG_CLASSES = new Set(['22', '23', '54']);

/** Another instance moved the checkpoint: its batch stands, this one is rolled back and read again. */
class CheckpointMoved extends Error {
  constructor() {
    super('projection checkpoint moved under this projector; rolling back its batch');
  }
}

/** Another Errata projects this database, and this one leaves projecting to it (saying why once). */
export class ProjectedByAnother extends Error {}

/**
 * The read models are of newer rules than this Errata's: a newer Errata projects this database (a rolling upgrade,
 * or an old instance left running). Rebuilding them under the older rules would undo its work, and it would undo
 * this one's in turn, for ever; this one leaves projecting to it.
 */
export class NewerRulesVersion extends ProjectedByAnother {
  constructor(readonly version: number) {
    super(
      `the read models are at rules version ${version}, newer than this Errata's ${READ_MODELS_VERSION}: a newer ` +
        'Errata projects this database, so this one does not (upgrade it, or stop it)',
    );
  }
}

/**
 * Since this Errata started, a newer one migrated the database (a rolling upgrade, or this one left running): the read
 * models may have columns this one does not fill, and rules it does not know, even under the same rules version.
 */
export class NewerMigrations extends ProjectedByAnother {
  constructor(migration: string) {
    super(
      `a newer Errata migrated this database since this one started (migration ${migration}, which this release ` +
        'does not have): it projects this database, so this one does not (upgrade it, or stop it)',
    );
  }
}

/**
 * Since this Errata started, one started with other derivation settings rebuilt the read models with those (the
 * last one started wins): deriving with its own would mix both, so this one leaves projecting to it.
 */
export class OtherDerivationSettings extends ProjectedByAnother {
  constructor(changes: readonly string[]) {
    super(
      `the read models are derived with other settings than this Errata's (${changes.join(', ')}), by an Errata ` +
        'started since: it projects this database, so this one does not (give both the same settings, or stop it)',
    );
  }
}

/**
 * A failure the records of a batch cause, every time they are projected: a data error of PostgreSQL's, or the
 * TypeError / SyntaxError / RangeError JavaScript throws on a value it cannot read (a BigInt from "soon"). Not the
 * database being away or busy, not another projector's move, and not an error of unknown kind, which pg's client
 * throws for a dropped connection: those are retried, as a record set aside is lost to the reports.
 */
export function isRecordFailure(error: unknown): boolean {
  if (error instanceof CheckpointMoved || isDatabaseUnavailable(error)) return false;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code.length === 5 && RECORD_PG_CLASSES.has(code.slice(0, 2));
  return error instanceof TypeError || error instanceof SyntaxError || error instanceof RangeError;
}
/**
 * The projector refreshes the planner's statistics itself once the projection tables have grown by this share (and
 * at least `ANALYZE_MIN_ROWS`): a table the planner believes empty or small gets plans that scan a whole project
 * for every batch's traces (measured: 290 ms instead of 10 ms per rollup update at 100 k events). Autovacuum would
 * do this too, but it can be off and is up to a minute behind a table that fills in seconds. Doubling is enough:
 * the planner scales its row estimates by a table's current size, so only an empty or tiny sample misleads it, and
 * each ANALYZE of these tables costs about half a second of PostgreSQL's time at 100 k events.
 */
const ANALYZE_GROWTH = 1;
const ANALYZE_MIN_ROWS = 10_000;

export type ProgressListener = (projected: number) => void;

/**
 * Keeps the read models in step with the event log. Each batch reads events in (transaction id, position)
 * order below the oldest running transaction, writes the read models and moves the checkpoint with a
 * compare-and-set, all in one transaction: a crash or a competing instance can never skip or double-apply.
 */
@Injectable()
export class ProjectorService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Projector');
  private readonly poller: Poller;
  /** Contribution rows the statistics were last taken at (null: not read yet), and events applied since. */
  private analyzedRows: number | null = null;
  private appliedSinceAnalyze = 0;
  /** The newer rules version found in the checkpoints and warned about once (null: none). */
  /** Why another Errata projects this database, as last said (null: this one projects). */
  private standingDownFor: string | null = null;
  /** A rebuild under way, in this process's view: the log says how far it got, and when it ended. */
  private rulesRebuild: { readonly startedAt: number; applied: number; loggedAt: number } | null = null;
  /** The read models checkpoint's rebuild_until as this process last read it (undefined: not read yet). */
  private seenRebuildUntil: string | null | undefined = undefined;
  /** The settings this process derives with, and whether it has compared them with the read models' (once). */
  private readonly derivation: DerivationSettings;
  private derivationChecked = false;
  /** Compared in the transaction under way (`projecting`). */
  private derivationCheckedInBatch = false;
  /** Ends the background loop's wait for a pause in ingest at shutdown. */
  private readonly shuttingDown = new AbortController();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DATABASE) private readonly database: Database,
    private readonly events: EventRepository,
    private readonly checkpoints: CheckpointRepository,
    private readonly readModels: ReadModelRepository,
    private readonly traceItems: TraceItemsRepository,
    private readonly rollups: RollupRepository,
    private readonly statistics: StatisticsRepository,
    private readonly ingest: IngestActivity,
  ) {
    this.derivation = derivationOf(config);
    this.poller = new Poller(
      config.projectionPollMs,
      () => this.catchUp(undefined, () => this.yieldToIngest()),
      (error, retryInMs) =>
        this.logger.error(
          `projection batch failed, retrying in ${retryInMs / 1000} s: ${error instanceof Error ? error.message : String(error)}`,
        ),
    );
  }

  onApplicationBootstrap(): void {
    this.poller.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.shuttingDown.abort();
    await this.poller.stop();
  }

  /** New events were committed: project them soon instead of at the next poll. */
  wake(): void {
    this.poller.wake();
  }

  /**
   * Projects one batch of events and span edges: writes their read-model rows, then re-derives every trace they
   * touch, with the traces hinted retries link to those — each trace's contributions that changed taken out of the
   * rollups, replaced and added back. Returns how many events and edges it applied (0 = caught up, or another instance
   * holds the lock).
   */
  async projectBatch(limit = BATCH_SIZE, edgeLimit = limit): Promise<number> {
    return this.projecting(async (trx) => {
      if (!(await tryProjectorLock(trx))) return 0;
      const eventsAt = await this.checkpointFor(trx, READ_MODELS_PROJECTION);
      const edgesAt = await this.checkpointFor(trx, SPAN_EDGES_PROJECTION);
      const [batch, edges] = await Promise.all([
        this.events.readAfter(trx, eventsAt, limit),
        this.events.readEdgesAfter(trx, edgesAt, edgeLimit),
      ]);
      if (batch.length === 0 && edges.length === 0) return 0;

      const changes = projectEvents(batch);
      await this.readModels.upsertToolCalls(trx, changes.toolCalls);
      await this.readModels.upsertAgentRuns(trx, changes.agentRuns);
      await this.readModels.upsertEscalations(trx, changes.escalations);
      await this.readModels.upsertSubagentReports(trx, changes.subagentReports);
      const { derived: traces, context } = await this.traceItems.retryLinkedTraces(
        trx,
        touchedTraces(batch, edges),
      );
      const items = await this.traceItems.load(trx, [...traces, ...context]);
      // Context traces are read, not written: their contributions stay as stored.
      const written = new Set(traces.map(traceKey));
      const contributions = traceContributions(items, { windowMs: this.derivation.retryWindowMs }).filter(
        (row) => written.has(traceKey(row)),
      );
      // Only what changed is written: a long trace's new spans change a few of its rows, not all of them.
      const { gone, fresh } = contributionChanges(
        await this.rollups.storedContributions(trx, traces),
        contributions,
      );
      await this.rollups.removeContributions(trx, gone);
      await this.rollups.addContributions(trx, fresh);

      for (const [name, from, read] of [
        [READ_MODELS_PROJECTION, eventsAt, batch],
        [SPAN_EDGES_PROJECTION, edgesAt, edges],
      ] as const) {
        const last = read.at(-1);
        if (last === undefined) continue;
        const moved = await this.checkpoints.compareAndSet(trx, name, READ_MODELS_VERSION, from, last);
        if (!moved) throw new CheckpointMoved();
      }
      return batch.length + edges.length;
    });
  }

  /** A projector transaction: a comparison of derivation settings made in it counts once it has committed. */
  private async projecting<T>(work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    this.derivationCheckedInBatch = false;
    const result = await this.database.db.transaction().execute(work);
    if (this.derivationCheckedInBatch) this.derivationChecked = true;
    return result;
  }

  /**
   * Where a projection stands; created at the log's start the first time. A checkpoint of another rules version
   * means every read model is rebuilt from the log, so both projections start over. A database a newer Errata
   * migrated since this one started is that one's to project (NewerMigrations).
   */
  private async checkpointFor(trx: Kysely<DB>, name: string): Promise<LogPosition> {
    if (name === READ_MODELS_PROJECTION) {
      const newer = await newerAppliedMigration(trx);
      if (newer !== null) throw new NewerMigrations(newer);
    }
    const checkpoint = await this.checkpoints.get(trx, name);
    if (checkpoint === null) {
      await this.checkpoints.ensure(trx, name, READ_MODELS_VERSION, this.derivation);
      return LOG_START;
    }
    if (checkpoint.version === READ_MODELS_VERSION) {
      if (name !== READ_MODELS_PROJECTION) return checkpoint.position;
      if (await this.derivedOtherwise(trx, checkpoint.derivation)) return LOG_START;
      await this.noticeRebuild(trx, checkpoint.rebuildUntil);
      return checkpoint.position;
    }
    if (checkpoint.version > READ_MODELS_VERSION) throw new NewerRulesVersion(checkpoint.version);
    await this.rebuildFromStart(trx, `rules version changed to ${READ_MODELS_VERSION}`);
    return LOG_START;
  }

  /**
   * Whether the read models were derived with other settings than this process's (ERRATA_RETRY_WINDOW_MS changed since
   * they were): then they are rebuilt with these, as for a new rules version, at this process's first look. Two
   * instances started with different settings (a rolling deploy) must not rebuild in turn for ever: the last one
   * started wins, and one that finds them changed after its first look stands down (OtherDerivationSettings).
   * Settings never recorded (a database older than 0017) are recorded as this process's.
   */
  private async derivedOtherwise(trx: Kysely<DB>, recorded: DerivationSettings | null): Promise<boolean> {
    const changes = recorded === null ? [] : derivationChanges(recorded, this.derivation);
    if (this.derivationChecked) {
      if (changes.length > 0) throw new OtherDerivationSettings(changes);
      return false;
    }
    this.derivationCheckedInBatch = true;
    if (recorded === null) {
      for (const [name] of PROJECTIONS) await this.checkpoints.recordDerivation(trx, name, this.derivation);
      return false;
    }
    if (changes.length === 0) return false;
    await this.rebuildFromStart(trx, changes.join(', '));
    return true;
  }

  /** Starts a rebuild this process reports in its log, from its start (`why`) to its end. */
  private async rebuildFromStart(trx: Kysely<DB>, why: string): Promise<void> {
    this.logger.log(`${why}: rebuilding the read models from the log`);
    await this.startOver(trx);
    this.rulesRebuild = { startedAt: Date.now(), applied: 0, loggedAt: Date.now() };
  }

  /**
   * A rebuild this process did not begin: one a stopped Errata began (it goes on where that one left off), or
   * `projections rebuild` run beside this server. Looked for at the first look in this process and whenever the
   * point the rebuild must pass changed, so the log says how far it got and when it ended here too. (A second
   * rebuild of a log that has not grown since the last one leaves that point where it was, and goes unsaid.)
   */
  private async noticeRebuild(trx: Kysely<DB>, rebuildUntil: string | null): Promise<void> {
    const seen = this.seenRebuildUntil;
    this.seenRebuildUntil = rebuildUntil;
    if (this.rulesRebuild !== null || rebuildUntil === null || rebuildUntil === seen) return;
    if (!(await this.checkpoints.rebuilding(trx, PROJECTIONS, READ_MODELS_VERSION))) return;
    this.logger.log('rebuilding the read models from the log: going on with a rebuild begun earlier');
    this.rulesRebuild = { startedAt: Date.now(), applied: 0, loggedAt: Date.now() };
  }

  /**
   * Whether a rebuild (a rules version change, other derivation settings, or `projections rebuild`) has not yet
   * projected the whole log it began with, in any Errata process on this database: the read models hold part of the
   * history. Settings of this process's that differ from the read models' count until its first look, which begins
   * that rebuild (`derivedOtherwise`): until then the read models are about to be emptied. After it, a difference is
   * another Errata's, started since, whose own rebuild counts once it has begun.
   */
  rebuilding(): Promise<boolean> {
    const due = this.derivationChecked ? null : this.derivation;
    return this.checkpoints.rebuilding(this.database.db, PROJECTIONS, READ_MODELS_VERSION, due);
  }

  /** Empties every read model and moves both projections back to the log's start. */
  private async startOver(trx: Kysely<DB>): Promise<void> {
    await this.readModels.lockForRebuild(trx);
    await this.readModels.truncate(trx);
    await this.rollups.truncate(trx);
    await this.checkpoints.clearSkips(trx);
    for (const [name, logTable] of PROJECTIONS) {
      await this.checkpoints.ensure(trx, name, READ_MODELS_VERSION, this.derivation);
      await this.checkpoints.reset(trx, name, READ_MODELS_VERSION, logTable, this.derivation);
    }
  }

  /**
   * Projects until nothing is left below the snapshot horizon; returns how many events it applied. `beforeBatch`
   * runs before each batch (the background loop yields to ingest there) and ends the catching up when it says false.
   */
  async catchUp(onProgress?: ProgressListener, beforeBatch?: () => Promise<boolean>): Promise<number> {
    try {
      return await this.projectAll(onProgress, beforeBatch);
    } catch (error) {
      if (!(error instanceof ProjectedByAnother)) throw error;
      if (this.standingDownFor !== error.message) this.logger.warn(error.message);
      this.standingDownFor = error.message;
      return 0;
    }
  }

  private async projectAll(
    onProgress?: ProgressListener,
    beforeBatch?: () => Promise<boolean>,
  ): Promise<number> {
    // Forgotten only once this Errata's version is seen again: a newer projector holding the lock is no news.
    if (await this.ensureCurrentVersion()) this.standingDownFor = null;
    let total = 0;
    let limit = BATCH_SIZE;
    for (;;) {
      if (beforeBatch !== undefined && !(await beforeBatch())) return total;
      let applied: number;
      try {
        applied = await this.projectBatch(limit);
      } catch (error) {
        if (!isRecordFailure(error)) throw error;
        // The same records fail every time: halve the batch down to the one that fails, and set it aside.
        if (limit > 1) {
          limit = Math.ceil(limit / 2);
          continue;
        }
        applied = await this.setAsideFailing();
      }
      if (applied === 0) {
        await this.logRebuildEnd();
        return total;
      }
      limit = Math.min(BATCH_SIZE, limit * 2);
      total += applied;
      onProgress?.(total);
      this.logRebuildProgress(applied);
      await this.refreshStatisticsAfter(applied);
    }
  }

  private logRebuildProgress(applied: number): void {
    const rebuild = this.rulesRebuild;
    if (rebuild === null) return;
    rebuild.applied += applied;
    if (Date.now() - rebuild.loggedAt < REBUILD_LOG_INTERVAL_MS) return;
    rebuild.loggedAt = Date.now();
    this.logger.log(`rebuilding the read models: ${rebuild.applied} records of the log projected`);
  }

  /** Once the log the rebuild began with is projected: a batch may find nothing for a while before (the lock). */
  private async logRebuildEnd(): Promise<void> {
    const rebuild = this.rulesRebuild;
    if (rebuild === null || (await this.rebuilding())) return;
    this.rulesRebuild = null;
    const seconds = ((Date.now() - rebuild.startedAt) / 1000).toFixed(1);
    this.logger.log(`read models rebuilt: ${rebuild.applied} records of the log in ${seconds} s`);
  }

  /**
   * Starts the rebuild a new rules version asks for in a transaction of its own: inside a batch that fails, the
   * emptied read models and the reset checkpoints would be rolled back with it, and tried again by every batch.
   * False when another projector holds the lock, and nothing was checked.
   */
  private async ensureCurrentVersion(): Promise<boolean> {
    return this.projecting(async (trx) => {
      if (!(await tryProjectorLock(trx))) return false;
      await this.checkpointFor(trx, READ_MODELS_PROJECTION);
      await this.checkpointFor(trx, SPAN_EDGES_PROJECTION);
      return true;
    });
  }

  /**
   * The batch of one event and one span edge fails: projects each alone, and sets aside the one that fails by itself
   * (`projection_skip` and the log say which and why). Returns how many were applied or set aside.
   */
  private async setAsideFailing(): Promise<number> {
    let done = 0;
    for (const projection of [READ_MODELS_PROJECTION, SPAN_EDGES_PROJECTION]) {
      done += await this.projectOrSetAside(projection);
    }
    return done;
  }

  /** The next record of one projection, alone; when that fails on the record, exactly this record is set aside. */
  private async projectOrSetAside(projection: string): Promise<number> {
    const reading = projection === READ_MODELS_PROJECTION;
    // Where the checkpoint stands and what comes after it, read first: the skip moves from exactly here past exactly
    // this record, or not at all (another projector moved on meanwhile).
    const checkpoint = await this.checkpoints.get(this.database.db, projection);
    if (checkpoint?.version !== READ_MODELS_VERSION) return 0;
    const at = checkpoint.position;
    const [next] = reading
      ? await this.events.readAfter(this.database.db, at, 1)
      : await this.events.readEdgesAfter(this.database.db, at, 1);
    if (next === undefined) return 0;
    try {
      return await this.projectBatch(reading ? 1 : 0, reading ? 0 : 1);
    } catch (error) {
      if (!isRecordFailure(error)) throw error;
      return this.setAside(projection, at, next, error);
    }
  }

  private async setAside(
    projection: string,
    at: LogPosition,
    record: LogPosition & { readonly projectId: number },
    cause: unknown,
  ): Promise<number> {
    const error = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    return this.database.db.transaction().execute(async (trx) => {
      if (!(await tryProjectorLock(trx))) return 0;
      const log = projection === READ_MODELS_PROJECTION ? 'event' : 'span_edge';
      if (
        (await this.checkpoints.setAsideBefore(trx, projection, log, record, MAX_SKIPS_IN_A_ROW)) >=
        MAX_SKIPS_IN_A_ROW
      ) {
        this.logger.error(
          `the ${MAX_SKIPS_IN_A_ROW} records before this one were all set aside: taking the failure for Errata's ` +
            'own, not the records, and retrying instead.',
        );
        throw cause;
      }
      if (!(await this.checkpoints.compareAndSet(trx, projection, READ_MODELS_VERSION, at, record))) return 0;
      await this.checkpoints.recordSkip(trx, {
        projection,
        position: record,
        projectId: record.projectId,
        error,
      });
      const what = projection === READ_MODELS_PROJECTION ? 'event' : 'span edge';
      this.logger.error(
        `set aside the ${what} at ${record.transactionId}/${record.globalPosition} (project ${record.projectId}), ` +
          `which fails to project: ${error}. The reports go on without it; a rebuild tries it again ` +
          '(projection_skip).',
      );
      return 1;
    });
  }

  /**
   * Background batches wait for a moment without OTLP requests in flight, `projectionYieldMs` at most: in a burst
   * the two compete for the same cores, and a slow acknowledgement costs spans (exporters drop what they cannot
   * send) while a late projection costs only freshness. `settle` and `rebuild` do not wait. At shutdown the
   * background loop stops before its next batch: a backlog left by a burst is projected after the next start.
   */
  private async yieldToIngest(): Promise<boolean> {
    // A turn of the event loop between batches: embedded PGlite answers in this process without one, so a long
    // catch-up (a rebuild after an upgrade) kept the HTTP server from listening and SIGTERM from being handled.
    await new Promise((resolve) => setImmediate(resolve));
    await this.ingest.quiet(this.config.projectionYieldMs, this.shuttingDown.signal);
    return !this.shuttingDown.signal.aborted;
  }

  /**
   * Statistics only help the planner: an ANALYZE that fails (past ERRATA_PG_QUERY_TIMEOUT_MS behind another's lock,
   * say) is a warning, and is tried again once as many events more are applied. Thrown, it failed the catch-up after
   * every batch, whose work was done, and the next batch asked for the same ANALYZE again.
   */
  private async refreshStatisticsAfter(applied: number): Promise<void> {
    this.analyzedRows ??= await this.statistics.contributionRowsEstimate();
    this.appliedSinceAnalyze += applied;
    if (this.appliedSinceAnalyze < Math.max(ANALYZE_MIN_ROWS, this.analyzedRows * ANALYZE_GROWTH)) return;
    this.appliedSinceAnalyze = 0;
    try {
      await this.statistics.analyze();
      this.analyzedRows = await this.statistics.contributionRowsEstimate();
    } catch (error) {
      this.logger.warn(
        `the planner's statistics of the read models could not be refreshed (${error instanceof Error ? error.message : String(error)}); ` +
          'projection goes on, and they are tried again later',
      );
    }
  }

  /**
   * Waits until the read models include every event committed before the call, projecting here or letting
   * whichever instance holds the projector lock do it. Returns how many events this call applied. Gives up when
   * the checkpoints have not moved for `timeoutMs`: another instance projecting a long log is progress too.
   */
  async settle(onProgress?: ProgressListener, timeoutMs = 60_000): Promise<number> {
    const targets = [
      [READ_MODELS_PROJECTION, await this.events.lastPosition()],
      [SPAN_EDGES_PROJECTION, await this.events.lastPosition('span_edge')],
    ] as const;
    let deadline = Date.now() + timeoutMs;
    let standing = '';
    let applied = 0;
    for (;;) {
      applied += await this.catchUp((done) => onProgress?.(applied + done));
      let reached = true;
      const positions: unknown[] = [];
      for (const [name, target] of targets) {
        const checkpoint = await this.checkpoints.get(this.database.db, name);
        positions.push(checkpoint);
        if (target === null) continue;
        reached &&=
          checkpoint?.version === READ_MODELS_VERSION &&
          compareLogPositions(checkpoint.position, target) >= 0;
      }
      if (reached) return applied;
      const now = JSON.stringify(positions);
      if (now !== standing) [standing, deadline] = [now, Date.now() + timeoutMs];
      if (Date.now() > deadline)
        throw new Error(`read models did not move towards the log for ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Empties the read models and replays the whole log into them. */
  async rebuild(onProgress?: ProgressListener): Promise<number> {
    await this.beginRebuild();
    return this.settle(onProgress);
  }

  /** Throws NewerRulesVersion when a newer Errata projects this database: what would be rebuilt is its to rebuild. */
  async refuseNewerRules(db: Kysely<DB> = this.database.db): Promise<void> {
    const checkpoint = await this.checkpoints.get(db, READ_MODELS_PROJECTION);
    if (checkpoint !== null && checkpoint.version > READ_MODELS_VERSION)
      throw new NewerRulesVersion(checkpoint.version);
  }

  /**
   * Empties the read models and moves the projections back to the log's start; projecting is left to the loop. In
   * `within`, a transaction of the caller's (`events prune` deletes in it first), else in one of its own.
   */
  async beginRebuild(within?: Transaction<DB>): Promise<void> {
    if (within === undefined) return this.database.db.transaction().execute((trx) => this.beginRebuild(trx));
    await sql`SELECT pg_advisory_xact_lock(${PROJECTOR_LOCK})`.execute(within);
    await this.refuseNewerRules(within);
    await this.startOver(within);
    // Its caller reports this rebuild (the CLI's progress bar): not news to this process's log.
    this.seenRebuildUntil = (await this.checkpoints.get(within, READ_MODELS_PROJECTION))?.rebuildUntil;
  }
}

/** A projector outside Nest (the CLI, tests), with repositories of its own over `database`, as the server wires it. */
export function standaloneProjector(config: AppConfig, database: Database): ProjectorService {
  return new ProjectorService(
    config,
    database,
    new EventRepository(database),
    new CheckpointRepository(),
    new ReadModelRepository(),
    new TraceItemsRepository(database, config),
    new RollupRepository(),
    new StatisticsRepository(database),
    new IngestActivity(),
  );
}

/** Takes the projector lock for the transaction, unless another instance holds it. */
async function tryProjectorLock(trx: Kysely<DB>): Promise<boolean> {
  const { rows } = await sql<{
    locked: boolean;
  }>`SELECT pg_try_advisory_xact_lock(${PROJECTOR_LOCK}) AS locked`.execute(trx);
  return rows[0]?.locked === true;
}

/** The traces a batch of events and edges touches, each once. */
function touchedTraces(
  events: readonly { projectId: number; data: unknown }[],
  edges: readonly { projectId: number; traceId: string }[],
): TraceRef[] {
  const traces = new Map<string, TraceRef>();
  const touch = (projectId: number, traceId: string) =>
    traces.set(traceKey({ projectId, traceId }), { projectId, traceId });
  for (const event of events)
    touch(event.projectId, (event.data as { span: { traceId: string } }).span.traceId);
  for (const edge of edges) touch(edge.projectId, edge.traceId);
  return [...traces.values()];
}
