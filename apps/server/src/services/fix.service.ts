import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import {
  decideFromTraffic,
  inVersionRange,
  latestNews,
  type Finding,
  type Fix,
  type FixEvent,
  type FixState,
} from '@errata/domain';
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DATABASE, type Database } from '../database/database';
import type { DB } from '../database/schema';
import { DeliveryRepository, sentKey } from '../repositories/delivery.repository';
import { FixRepository } from '../repositories/fix.repository';
import { OwnerRepository, type Owner } from '../repositories/owner.repository';
import { FindingNotFound, FixNotFound } from './finding-not-found';
import { FindingsService, type FindingWithContract } from './findings.service';
import { dedupeKeyOf, webhookTypeOf } from './fix-news';
import { Poller } from './poller';
import { ProjectorService } from './projector.service';

const NO_FILTER = { from: null, to: null, server: null, tool: null, agent: null };

/**
 * What a round tells a finding's owners: a new event (appended, then sent), or the fix's latest news again, as `fix`
 * after it, to owners that lack it. `before` is the fix the decision was made from (null: none yet).
 */
type RoundNews = {
  readonly before: Fix | null;
  readonly event: FixEvent;
  readonly owners: readonly Owner[];
} & ({ readonly isNew: true } | { readonly isNew: false; readonly fix: Fix });

/**
 * Turns the findings of owned MCP servers into fixes and follows them (DOMAIN.md §7): a finding with an owner gets
 * FixSuggested and a webhook to the owner; later traffic verifies the fix (a newer server version stopped violating
 * the rule) or finds it regressed (re-opened, and the owner is notified again). Events and the webhooks they cause
 * commit together (transactional outbox).
 */
@Injectable()
export class FixService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Fixes');
  private readonly poller: Poller;
  /** Said once per rebuild: the rounds wait for it. */
  private waitingForRebuild = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DATABASE) private readonly database: Database,
    private readonly findings: FindingsService,
    private readonly owners: OwnerRepository,
    private readonly fixes: FixRepository,
    private readonly deliveries: DeliveryRepository,
    private readonly projector: ProjectorService,
  ) {
    this.poller = new Poller(
      config.fixIntervalMs,
      (stopping) => this.runOnce(stopping),
      (error, retryInMs) =>
        this.logger.error(
          `fix round failed, retrying in ${retryInMs / 1000} s: ${error instanceof Error ? error.message : error}`,
        ),
    );
  }

  onApplicationBootstrap(): void {
    this.poller.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.poller.stop();
  }

  /**
   * One round over every project with owners; returns the events it appended. None while the read models are being
   * rebuilt: half the history would verify fixes that the other half contradicts, and tell their owners so. None
   * either while another instance on the database runs one (it holds the round's lock): the fixes' locks keep every
   * decision right, but each instance would read every project again. Once `stopping` aborts, the round ends after
   * the read or the finding in flight: a project with thousands of findings with news (their first round) takes
   * minutes, and the next round (after the next start) picks up where it stopped, as every round decides from what
   * is stored.
   */
  async runOnce(stopping?: AbortSignal): Promise<FixEvent[]> {
    if (await this.projector.rebuilding()) {
      if (!this.waitingForRebuild)
        this.logger.log('the read models are being rebuilt: fixes wait for it to finish');
      this.waitingForRebuild = true;
      return [];
    }
    this.waitingForRebuild = false;
    // Embedded PGlite has one process and one connection, which a lock's session would keep from the round.
    if (this.database.kind === 'pglite') return this.round(stopping);
    return this.database.db.connection().execute(async (session) => {
      if (!(await this.fixes.tryRoundLock(session))) return [];
      try {
        return await this.round(stopping);
      } finally {
        await this.fixes.roundUnlock(session);
      }
    });
  }

  private async round(stopping?: AbortSignal): Promise<FixEvent[]> {
    const appended: FixEvent[] = [];
    for (const projectId of await this.fixes.projectsWithOwners()) {
      if (stopping?.aborted) break;
      appended.push(...(await this.runProject(projectId, stopping)));
    }
    return appended;
  }

  /** The fix, acknowledged: now, or already (the first acknowledgement's who and when stand). */
  async acknowledge(projectId: number, findingId: string, by: string): Promise<Fix> {
    const acknowledged = await this.fixes.acknowledge(projectId, findingId, by);
    if (acknowledged !== null) return acknowledged.fix;
    // An id that names no finding at all is the caller's mistake (list the findings), not a missing owner.
    if (!(await this.findings.exists(projectId, findingId))) throw new FindingNotFound(findingId);
    throw new FixNotFound(findingId);
  }

  async list(projectId: number, state: FixState | null, page: { limit: number; offset: number }) {
    return this.fixes.list(projectId, { state, page });
  }

  /** The fix and its events, from one snapshot. */
  async get(projectId: number, findingId: string) {
    return this.database.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const fix = await this.fixes.get(trx, projectId, findingId);
        if (fix === null) throw new FixNotFound(findingId);
        return { ...fix, events: await this.fixes.events(trx, projectId, findingId) };
      });
  }

  /**
   * Owners whose endpoint is disabled (it answered 410) count too: the fix is still followed, and only their
   * messages wait, pending, until the endpoint is enabled again (the delivery worker claims none of a disabled owner).
   * What a round decides from is read for the whole project at once (`newsOf`), and so are the details the webhooks
   * of the findings with news show; only a finding with news costs a transaction of its own.
   */
  private async runProject(projectId: number, stopping?: AbortSignal): Promise<FixEvent[]> {
    const owners = await this.owners.list(projectId);
    const { report } = await this.findings.everything(projectId, NO_FILTER);
    const owned = report.findings
      .map((finding) => ({
        finding,
        owners: owners.filter(
          (owner) =>
            owner.serverName === finding.server &&
            (finding.serverVersions.length === 0
              ? owner.versionRange === null
              : finding.serverVersions.some((version) => inVersionRange(version, owner.versionRange))),
        ),
      }))
      .filter(({ owners }) => owners.length > 0);
    if (stopping?.aborted) return [];
    const news = await this.newsOf(projectId, owned);
    if (news.size === 0 || stopping?.aborted) return [];
    // The findings' samples and contracts, for the webhooks: read only when there is one to send, and for all of them
    // at once, where a read per finding read the whole project's sums for each.
    const details = await this.findings.withContracts(projectId, [...news.keys()], NO_FILTER);
    const appended: FixEvent[] = [];
    for (const { finding } of owned) {
      if (stopping?.aborted) break;
      const found = news.get(finding.id);
      const detail = details.get(finding.id);
      // A finding gone since `everything` read it (its events redacted or erased) has nothing to send any more.
      if (found !== undefined && detail !== undefined)
        appended.push(...(await this.decide(projectId, detail, found)));
    }
    return appended;
  }

  /**
   * Enqueues what one finding's fix has to send, and appends its event when it is new, in one transaction. Everything
   * the decision read (the fix's traffic and deliveries, the finding's detail for the webhook) was read before it:
   * inside, a query on another connection would wait for ever on embedded PGlite, whose one connection the transaction
   * holds. If the fix changed since the round read it (another instance decided, or a delivery), this round leaves
   * it to the next.
   */
  private async decide(projectId: number, detail: FindingWithContract, news: RoundNews): Promise<FixEvent[]> {
    return this.database.db.transaction().execute(async (trx) => {
      await this.fixes.lock(trx, projectId, detail.id);
      const fix = await this.fixes.get(trx, projectId, detail.id);
      if (JSON.stringify(fix) !== JSON.stringify(news.before)) return [];
      if (!news.isNew) {
        await this.notify(trx, projectId, news.owners, detail, news.fix, news.event);
        return [];
      }
      const after = await this.fixes.append(trx, projectId, [news.event]);
      await this.notify(trx, projectId, news.owners, detail, after!, news.event);
      return [news.event];
    });
  }

  /**
   * What a round has to tell each owned finding's owners (by finding id; none: nothing): a suggestion, for a finding
   * without a fix; for a fix, what later traffic says (a new event, for all of them), else the fix's latest news for
   * the owners that do not have it. An owner registered after that news (a new one, or one replaced to correct its
   * webhook URL, whose deliveries went with it) would otherwise wait for the next event. A read of each kind for the
   * whole project (fixes, their traffic from one snapshot, histories, messages sent), however many findings it has.
   */
  private async newsOf(
    projectId: number,
    owned: readonly { finding: Finding; owners: readonly Owner[] }[],
  ): Promise<Map<string, RoundNews>> {
    const news = new Map<string, RoundNews>();
    const fixes = new Map((await this.fixes.list(projectId)).map((fix) => [fix.findingId, fix]));
    const fixed: { finding: Finding; owners: readonly Owner[]; fix: Fix }[] = [];
    for (const { finding, owners } of owned) {
      const fix = fixes.get(finding.id);
      if (fix === undefined)
        news.set(finding.id, { before: null, event: suggestion(finding), isNew: true, owners });
      else fixed.push({ finding, owners, fix });
    }
    // Only traffic after the suggestion tells whether the fix landed: what came before is what it was suggested for
    // (the versions violating then are the fix's bad versions; the verification adds those violating since).
    const traffic = await this.findings.versionTraffic(
      projectId,
      fixed.map(({ finding, fix }) => ({ ...finding, from: new Date(fix.suggestedAt) })),
    );
    const options = { minCalls: this.config.fixMinCalls, now: new Date().toISOString() };
    const quiet: typeof fixed = [];
    fixed.forEach(({ finding, owners, fix }, index) => {
      const decided = decideFromTraffic(fix, traffic.get(index) ?? [], options);
      if (decided === null) quiet.push({ finding, owners, fix });
      else news.set(finding.id, { before: fix, event: decided, isNew: true, owners });
    });
    const histories = await this.fixes.histories(
      projectId,
      quiet.map(({ finding }) => finding.id),
    );
    const unsent = quiet.flatMap(({ finding, owners, fix }) => {
      const latest = latestNews(histories.get(finding.id) ?? []);
      return latest === null
        ? []
        : [{ finding, owners, fix, latest, key: dedupeKeyOf(finding.id, latest.news) }];
    });
    const sent = await this.deliveries.ownersSent(
      projectId,
      unsent.map(({ finding, key }) => ({ findingId: finding.id, dedupeKey: key })),
    );
    for (const { finding, owners, fix, latest, key } of unsent) {
      const served = sent.get(sentKey(finding.id, key));
      const unserved = owners.filter((owner) => served?.has(owner.id) !== true);
      // The message says what the first one said: the fix as its event left it, not delivered (to an owner since
      // deleted) nor acknowledged since. The fix is checked unchanged when the message is enqueued.
      if (unserved.length > 0)
        news.set(finding.id, {
          before: fix,
          event: latest.news,
          isNew: false,
          owners: unserved,
          fix: latest.fix,
        });
    }
    return news;
  }

  /**
   * Enqueues the webhook an event sends each owner, in the event's transaction; one payload for all of them. Its
   * finding has the fix as the event left it, as `data.fix` has. And unlike `GET /findings/{id}` it has no
   * `deliveries`, where the finding's messages stand: a message cannot tell its own delivery, and its body is the
   * same on every attempt and redelivery.
   */
  private async notify(
    trx: Kysely<DB>,
    projectId: number,
    owners: readonly Owner[],
    detail: FindingWithContract,
    fix: Fix,
    event: FixEvent,
  ) {
    const type = webhookTypeOf(event);
    if (type === null) return;
    // The fix after the contract, where `GET /findings/{id}` has it.
    const finding = { ...detail, fix };
    const payload = JSON.stringify({
      type,
      timestamp: new Date().toISOString(),
      data: { fix, finding, suggestedContract: finding.suggestedContract },
    });
    for (const owner of owners) {
      await this.deliveries.enqueue(trx, {
        projectId,
        ownerId: owner.id,
        findingId: finding.id,
        msgId: `msg_${randomUUID().replace(/-/g, '')}`,
        dedupeKey: dedupeKeyOf(finding.id, event),
        eventType: type,
        payload,
      });
    }
  }
}

/** The event that opens a fix for a finding of an owned server. */
function suggestion(finding: Finding): FixEvent {
  const { id: findingId, server, tool, rule, serverVersions: versions } = finding;
  return {
    type: 'FixSuggested',
    data: { findingId, server, tool, rule, versions, at: new Date().toISOString() },
  };
}
