import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, type Database } from '../database/database';
import { LogRetentionRepository, type EndedTrace } from '../repositories/log-retention.repository';
import { ProjectorService } from './projector.service';

/** Traces deleted per statement by `prune`: a progress step, and a bounded statement. */
const PRUNE_CHUNK = 500;

export interface PruneResult {
  readonly events: number;
  readonly edges: number;
  readonly ingestRecords: number;
}

/**
 * Retention of the event log (`events prune`): the traces that ended before a date leave it, and the read models are
 * rebuilt from what is left, so that the reports read as if those traces had never been sent.
 */
@Injectable()
export class LogRetentionService {
  constructor(
    @Inject(DATABASE) private readonly database: Database,
    private readonly retention: LogRetentionRepository,
    private readonly projector: ProjectorService,
  ) {}

  /** The traces (of one project, or of all) whose every span started before `cutoff`. */
  endedBefore(cutoff: Date, projectId: number | null): Promise<EndedTrace[]> {
    return this.retention.tracesEndedBefore(cutoff, projectId);
  }

  /**
   * Deletes `traces` (each only if it still ended before `cutoff`) and the records of requests received before then,
   * and begins the rebuild, all in one transaction: deleted spans never stay counted in the reports, whether the
   * rebuild is then run here (`projector.settle`), by a running server, or by the next start. The projector's lock
   * is taken last, so a running server's reports stay readable until the commit.
   */
  async prune(
    traces: readonly EndedTrace[],
    cutoff: Date,
    projectId: number | null,
    onProgress: (tracesDone: number) => void,
  ): Promise<PruneResult> {
    return this.database.db.transaction().execute(async (trx) => {
      await this.projector.refuseNewerRules(trx);
      const deleted = { events: 0, edges: 0 };
      for (let at = 0; at < traces.length; at += PRUNE_CHUNK) {
        const chunk = await this.retention.deleteTraces(trx, traces.slice(at, at + PRUNE_CHUNK), cutoff);
        deleted.events += chunk.events;
        deleted.edges += chunk.edges;
        onProgress(Math.min(traces.length, at + PRUNE_CHUNK));
      }
      const ingestRecords = await this.retention.deleteIngestRecordsBefore(trx, cutoff, projectId);
      await this.projector.beginRebuild(trx);
      return { ...deleted, ingestRecords };
    });
  }
}
