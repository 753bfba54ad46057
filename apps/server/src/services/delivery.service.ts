import {
  ConflictException,
  Inject,
  Injectable,
  Logger,
  NotFoundException,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { decideOnDelivery, isFixNews } from '@errata/domain';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DATABASE, type Database } from '../database/database';
import { DeliveryRepository } from '../repositories/delivery.repository';
import { FixRepository } from '../repositories/fix.repository';
import { OwnerRepository } from '../repositories/owner.repository';
import { DeliveryRefusedError, describeWebhookUrl, postSafely } from '../webhooks/safe-http';
import { webhookHeaders } from '../webhooks/standard-webhooks';
import { dedupeKeyOf } from './fix-news';
import { Poller } from './poller';

const CLAIM = 20;
const DAY_MS = 86_400_000;
const RESPONSE_CAP_BYTES = 64 * 1024;

/** The delay before attempt `attempt + 1`: base × 4^(attempt − 1), at most a day, ±50 % jitter. */
export function backoffMs(attempt: number, baseMs: number, random = Math.random): number {
  return Math.round(Math.min(DAY_MS, baseMs * 4 ** Math.max(0, attempt - 1)) * (0.5 + random()));
}

const attemptsMade = (attempts: number): string => `${attempts} attempt${attempts === 1 ? '' : 's'}`;

/**
 * `Retry-After` as seconds or an HTTP date, in ms from now, at most a day (the longest backoff: a receiver cannot park
 * a delivery for years, nor overflow the next attempt's time); null when absent or unreadable.
 */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return null;
  const ms = /^\d+$/.test(value.trim()) ? Number(value.trim()) * 1000 : Date.parse(value) - now;
  return Number.isNaN(ms) ? null : Math.min(DAY_MS, Math.max(0, ms));
}

/**
 * Sends the webhook outbox: claims due deliveries, signs them (Standard Webhooks, every live secret), posts them
 * through the SSRF guard, and records the outcome. 2xx: delivered (and the fix's FixDelivered, when the message
 * carried the fix's latest suggestion or regression). 410: the owner's endpoint is disabled. Anything else: another
 * attempt with exponential backoff and jitter, `Retry-After` honoured, until the delivery is dead-lettered after the
 * last attempt.
 */
@Injectable()
export class DeliveryService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private readonly poller: Poller;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DATABASE) private readonly database: Database,
    private readonly deliveries: DeliveryRepository,
    private readonly owners: OwnerRepository,
    private readonly fixes: FixRepository,
  ) {
    this.poller = new Poller(
      config.deliveryPollMs,
      (stopping) => this.sendDue(stopping),
      (error, retryInMs) =>
        this.logger.error(
          `delivery round failed, retrying in ${retryInMs / 1000} s: ${error instanceof Error ? error.message : error}`,
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
   * Sends every due delivery, or until `stopping` aborts: the claim in flight is finished, and what is still due waits
   * for the next start (a receiver that hangs takes ERRATA_WEBHOOK_TIMEOUT_MS per claim). Returns how many attempts it
   * made.
   */
  async sendDue(stopping?: AbortSignal): Promise<number> {
    let attempts = 0;
    for (;;) {
      if (stopping?.aborted) return attempts;
      const due = await this.deliveries.claimDue(CLAIM, this.config.webhookTimeoutMs * 2 + 5_000);
      if (due.length === 0) return attempts;
      attempts += due.length;
      await Promise.all(due.map((delivery) => this.attempt(delivery)));
    }
  }

  list(projectId: number, status: string | null, page: { limit: number; offset: number }) {
    return this.deliveries.list(projectId, status, page);
  }

  async redeliver(projectId: number, id: string) {
    const { delivery, redelivered } = await this.deliveries.redeliver(projectId, id);
    if (delivery === undefined) throw new NotFoundException(`no delivery ${id} in this project`);
    if (!redelivered) throw new ConflictException(await this.stillPending(delivery));
    this.poller.wake();
    return delivery;
  }

  /** Why a pending message is not redelivered: it goes out on its own, or once its owner's endpoint is enabled. */
  private async stillPending(delivery: {
    id: string;
    ownerId: string;
    attempts: number;
    nextAttemptAt: string | null;
  }) {
    const owner = await this.owners.byId(this.database.db, delivery.ownerId);
    const pending = `delivery ${delivery.id} is pending`;
    if (owner !== undefined && owner.disabledAt !== null) {
      return (
        `${pending}: it goes out once its owner's endpoint, disabled at ${owner.disabledAt}, is enabled again ` +
        `(POST /api/v1/owners/${owner.id}/enable)`
      );
    }
    return (
      `${pending}: it goes out on its own (${attemptsMade(delivery.attempts)} so far, the next at ` +
      `${delivery.nextAttemptAt}); redeliver it once it is dead, disabled or delivered`
    );
  }

  private async attempt(
    delivery: Awaited<ReturnType<DeliveryRepository['claimDue']>>[number],
  ): Promise<void> {
    const owner = await this.owners.byId(this.database.db, delivery.ownerId);
    if (owner === undefined) return;
    let status: number | null = null;
    let error: string;
    let retryAfter: number | null = null;
    try {
      const response = await postSafely(
        owner.webhookUrl,
        delivery.payload,
        webhookHeaders(owner.secrets, delivery.msgId, delivery.payload),
        {
          allowInternal: this.config.webhookAllowInternal,
          timeoutMs: this.config.webhookTimeoutMs,
          maxResponseBytes: RESPONSE_CAP_BYTES,
        },
      );
      status = response.status;
      if (status >= 200 && status < 300) return await this.delivered(delivery, status);
      if (status === 410) return await this.gone(delivery.ownerId, status);
      error = `HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`;
      retryAfter = retryAfterMs(response.headers['retry-after']);
    } catch (failure) {
      error = failure instanceof Error ? failure.message : String(failure);
      if (failure instanceof DeliveryRefusedError)
        this.logger.warn(
          `refused webhook of owner ${owner.id} to ${describeWebhookUrl(owner.webhookUrl)}: ${error}`,
        );
    }
    const dead = delivery.attempts >= this.config.webhookMaxAttempts;
    const delayMs = Math.max(backoffMs(delivery.attempts, this.config.webhookRetryBaseMs), retryAfter ?? 0);
    await this.deliveries.failed(delivery.id, { status, error, delayMs, dead });
  }

  private async delivered(
    delivery: { id: string; projectId: number; findingId: string | null; ownerId: string; dedupeKey: string },
    status: number,
  ) {
    await this.database.db.transaction().execute(async (trx) => {
      await this.deliveries.markDelivered(trx, delivery.id, status);
      const { projectId, findingId, ownerId } = delivery;
      if (findingId === null) return;
      await this.fixes.lock(trx, projectId, findingId);
      const history = await this.fixes.history(trx, projectId, findingId);
      // The message's dedupe key names the news it carried; what that means for the fix is the domain's decision.
      const news = history
        .filter(isFixNews)
        .find((event) => dedupeKeyOf(findingId, event) === delivery.dedupeKey);
      if (news === undefined) return;
      const event = decideOnDelivery(history, news, { ownerId, at: new Date().toISOString() });
      if (event !== null) await this.fixes.append(trx, projectId, [event]);
    });
  }

  /** 410 Gone: the owner does not want these any more; stop until someone re-enables the endpoint. */
  private async gone(ownerId: string, status: number) {
    await this.database.db.transaction().execute(async (trx) => {
      await this.owners.setDisabled(trx, ownerId, 'the endpoint answered 410 Gone');
      await this.deliveries.disableOwnerDeliveries(trx, ownerId, status, 'endpoint disabled after 410 Gone');
    });
    this.logger.warn(`owner ${ownerId} answered 410 Gone: endpoint disabled`);
  }
}
