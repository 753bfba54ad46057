import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

/** Seconds a read refused for want of a place is told to wait (`Retry-After`). */
export const READ_RETRY_AFTER_SECONDS = 1;

/** Reads that may wait for a place, per place: a dashboard asks for several reports at once. */
export const QUEUED_READS_PER_PLACE = 4;

/**
 * What `enter` gives a read: a place (`admitted`, to be given back with `leave`), none because the queue is full
 * (`refused`), or none because its caller went away while it waited (`abandoned`: nobody would read its answer).
 */
export type ReadEntry = 'admitted' | 'refused' | 'abandoned';

/**
 * The report and read requests being answered (`ERRATA_MAX_CONCURRENT_READS`), over REST and MCP alike. A report
 * over a long window holds a pool connection for seconds; without a bound a burst of them took every connection, and
 * the projector, webhook deliveries and fix rounds failed waiting for one. A read past the bound waits for a place,
 * holding no connection, in a short queue (QUEUED_READS_PER_PLACE per place: one dashboard's several reports fit);
 * past the queue it is refused at once. A read whose caller goes away while it waits leaves the queue: its place goes
 * to the next caller still there, and its query is never run.
 */
@Injectable()
export class ReadAdmission {
  private admitted = 0;
  private readonly waiting: ((entry: ReadEntry) => void)[] = [];

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  get readsAdmitted(): number {
    return this.admitted;
  }

  get readsWaiting(): number {
    return this.waiting.length;
  }

  /**
   * Takes a place, after waiting for one if need be. `callerGone` is aborted when whoever asked for the read stops
   * waiting for its answer (the HTTP client disconnected): a read still queued then leaves the queue, `abandoned`.
   */
  enter(callerGone?: AbortSignal): Promise<ReadEntry> {
    if (callerGone?.aborted) return Promise.resolve('abandoned');
    if (this.admitted < this.config.maxConcurrentReads) {
      this.admitted++;
      return Promise.resolve('admitted');
    }
    if (this.waiting.length >= this.config.maxConcurrentReads * QUEUED_READS_PER_PLACE) {
      return Promise.resolve('refused');
    }
    return new Promise((resolve) => {
      const admit = (entry: ReadEntry) => {
        callerGone?.removeEventListener('abort', abandon);
        resolve(entry);
      };
      const abandon = () => {
        const at = this.waiting.indexOf(admit);
        if (at === -1) return; // admitted already: the caller gives the place back with `leave`
        this.waiting.splice(at, 1);
        resolve('abandoned');
      };
      callerGone?.addEventListener('abort', abandon, { once: true });
      this.waiting.push(admit);
    });
  }

  /** Gives a place back: to the read waiting longest, if any. */
  leave(): void {
    const next = this.waiting.shift();
    if (next === undefined) this.admitted--;
    else next('admitted');
  }
}
