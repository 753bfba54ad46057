import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

/** Seconds a read refused for want of a place is told to wait (`Retry-After`). */
export const READ_RETRY_AFTER_SECONDS = 1;

/** Reads that may wait for a place, per place: a dashboard asks for several reports at once. */
export const QUEUED_READS_PER_PLACE = 4;

/**
 * The report and read requests being answered (`ERRATA_MAX_CONCURRENT_READS`). A report over a long window holds a
 * pool connection for seconds; without a bound a burst of them took every connection, and the projector, webhook
 * deliveries and fix rounds failed waiting for one. A read past the bound waits for a place, holding no connection,
 * in a short queue (QUEUED_READS_PER_PLACE per place: one dashboard's several reports fit); past the queue it is
 * refused at once.
 */
@Injectable()
export class ReadAdmission {
  private admitted = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  get readsAdmitted(): number {
    return this.admitted;
  }

  get readsWaiting(): number {
    return this.waiting.length;
  }

  /** Takes a place, after waiting for one if need be: true, to be given back with `leave`; false when the queue is full. */
  enter(): Promise<boolean> {
    if (this.admitted < this.config.maxConcurrentReads) {
      this.admitted++;
      return Promise.resolve(true);
    }
    if (this.waiting.length >= this.config.maxConcurrentReads * QUEUED_READS_PER_PLACE) {
      return Promise.resolve(false);
    }
    return new Promise((resolve) => this.waiting.push(() => resolve(true)));
  }

  /** Gives a place back: to the read waiting longest, if any. */
  leave(): void {
    const next = this.waiting.shift();
    if (next === undefined) this.admitted--;
    else next();
  }
}
