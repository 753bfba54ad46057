import { Inject, Injectable } from '@nestjs/common';
import { redactFindingSamples, redactStoredEvent, type FindingWithSamples } from '@errata/domain';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DATABASE, type Database } from '../database/database';
import { compareLogPositions, LOG_START, type LogPosition } from '../repositories/event.repository';
import { LogRedactionRepository, type RedactedEvent } from '../repositories/log-redaction.repository';
import { ProjectorService } from './projector.service';

/** Events read per batch: a progress step, a bounded read, and a bounded transaction. */
const REDACT_BATCH = 1000;

/**
 * What redacting the log again changes: events and texts, the last event it changes (null: none), and the webhook
 * messages whose finding samples it changes.
 */
export interface RedactionSurvey {
  readonly scanned: number;
  readonly events: number;
  readonly texts: number;
  readonly last: LogPosition | null;
  readonly messages: number;
}

/**
 * The event log redacted again (`events redact`): texts are redacted as they are stored, and a release whose redaction
 * catches more does not rewrite what an older one stored, nor can a rebuild, which derives from the log. This applies
 * the current redaction to every stored text (`redactStoredEvent`), then the read models are rebuilt from the log.
 */
@Injectable()
export class LogRedactionService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DATABASE) private readonly database: Database,
    private readonly redaction: LogRedactionRepository,
    private readonly projector: ProjectorService,
  ) {}

  /** How many events the log holds (of one project, or of all): what `survey` reads. */
  count(projectId: number | null): Promise<number> {
    return this.redaction.count(projectId);
  }

  /** What `redact` would change, batch by batch; changes nothing. */
  async survey(projectId: number | null, onProgress: (scanned: number) => void): Promise<RedactionSurvey> {
    const survey = { scanned: 0, events: 0, texts: 0, last: null as LogPosition | null, messages: 0 };
    await this.eachBatch(
      projectId,
      null,
      async (changed) => {
        survey.events += changed.length;
        survey.texts += changed.reduce((sum, event) => sum + event.texts, 0);
        survey.last = changed.at(-1) ?? survey.last;
      },
      (read) => {
        survey.scanned += read;
        onProgress(survey.scanned);
      },
    );
    await this.eachMessageBatch(projectId, async (changed) => {
      survey.messages += changed.length;
    });
    return survey;
  }

  /**
   * Replaces the texts `survey` found by their redacted form, in the webhook messages and then in the log, one
   * transaction per batch: a log cut off midway is part
   * redacted again and whole (a second run finishes it). The batch that holds the last change also begins the rebuild
   * of the read models, in its transaction: once every text is rewritten, the read models are to be derived again,
   * whether this process, a running server or the next start projects them. The projector's lock is taken last there.
   */
  async redact(
    survey: RedactionSurvey,
    projectId: number | null,
    onProgress: (eventsDone: number) => void,
  ): Promise<{ events: number; texts: number; messages: number }> {
    const done = { events: 0, texts: 0, messages: 0 };
    // (a message's texts are no event's: the rebuild does not reach them)
    if (survey.messages > 0)
      await this.eachMessageBatch(projectId, async (changed) => {
        done.messages += await this.redaction.replacePayloads(changed);
      });
    const last = survey.last;
    if (last === null) return done;
    let rebuilding = false;
    await this.eachBatch(projectId, last, async (changed, final) => {
      if (changed.length === 0 && !final) return;
      await this.database.db.transaction().execute(async (trx) => {
        await this.redaction.replaceData(trx, changed);
        if (final) await this.projector.beginRebuild(trx);
      });
      rebuilding ||= final;
      done.events += changed.length;
      done.texts += changed.reduce((sum, event) => sum + event.texts, 0);
      onProgress(done.events);
    });
    // (the log ended before the last change was reached: another run redacted the rest meanwhile)
    if (!rebuilding) await this.projector.beginRebuild();
    return done;
  }

  /**
   * Reads the log in batches, up to `until` when given, and hands `work` each batch's events whose texts change,
   * redacted, and whether the batch is the last; `onBatch` says how many events were read.
   */
  private async eachBatch(
    projectId: number | null,
    until: LogPosition | null,
    work: (changed: (RedactedEvent & { texts: number })[], final: boolean) => Promise<void>,
    onBatch: (read: number) => void = () => undefined,
  ): Promise<void> {
    const options = { textLimitBytes: this.config.textLimitBytes };
    let after: LogPosition = LOG_START;
    for (let final = false; !final;) {
      const rows = await this.redaction.eventsAfter(after, projectId, REDACT_BATCH);
      if (rows.length === 0) return;
      after = rows.at(-1)!;
      final = rows.length < REDACT_BATCH || (until !== null && compareLogPositions(after, until) >= 0);
      const changed: (RedactedEvent & { texts: number })[] = [];
      for (const row of rows) {
        if (until !== null && compareLogPositions(row, until) > 0) break;
        const redacted = redactStoredEvent(row.type, row.data, options);
        if (redacted.texts > 0)
          changed.push({
            transactionId: row.transactionId,
            globalPosition: row.globalPosition,
            data: redacted.data,
            texts: redacted.texts,
          });
      }
      onBatch(rows.length);
      await work(changed, final);
    }
  }

  /**
   * Reads the webhook messages in batches and hands `work` those whose finding samples change, their bodies redacted
   * again. A message's body is JSON, `{type, timestamp, data: {fix, finding, suggestedContract}}`, written by the fix
   * service; one that is no such JSON is left alone.
   */
  private async eachMessageBatch(
    projectId: number | null,
    work: (changed: { id: string; payload: string }[]) => Promise<void>,
  ): Promise<void> {
    const options = { textLimitBytes: this.config.textLimitBytes };
    let after: string | null = null;
    for (;;) {
      const rows = await this.redaction.messagesAfter(after, projectId, REDACT_BATCH);
      if (rows.length === 0) return;
      after = rows.at(-1)!.id;
      const changed: { id: string; payload: string }[] = [];
      for (const row of rows) {
        const message = parseMessage(row.payload);
        if (message === null) continue;
        const redacted = redactFindingSamples(message.data.finding, options);
        if (redacted.texts === 0) continue;
        const payload = JSON.stringify({ ...message, data: { ...message.data, finding: redacted.data } });
        changed.push({ id: row.id, payload });
      }
      if (changed.length > 0) await work(changed);
      if (rows.length < REDACT_BATCH) return;
    }
  }
}

type Message = { data: { finding: FindingWithSamples } & Record<string, unknown> } & Record<string, unknown>;

function parseMessage(payload: string): Message | null {
  try {
    const message = JSON.parse(payload) as Partial<Message> | null;
    const finding = message?.data?.finding;
    return typeof finding === 'object' && finding !== null ? (message as Message) : null;
  } catch {
    return null;
  }
}
