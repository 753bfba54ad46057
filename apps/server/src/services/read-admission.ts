import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

/** Seconds a read refused for want of a place is told to wait (`Retry-After`). */
export const READ_RETRY_AFTER_SECONDS = 1;

/**
 * The report and read requests being answered (`ERRATA_MAX_CONCURRENT_READS`). A report over a long window holds a
 * pool connection for seconds; without a bound a burst of them took every connection, and the projector, webhook
 * deliveries and fix rounds failed waiting for one. A request past the bound is refused at once rather than queued:
 * a queue would only move the wait into the client's timeout.
 */
@Injectable()
export class ReadAdmission {
  private admitted = 0;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  get readsAdmitted(): number {
    return this.admitted;
  }

  /** Takes a place: true, to be given back with `leave`; false when every place is taken. */
  tryEnter(): boolean {
    if (this.admitted >= this.config.maxConcurrentReads) return false;
    this.admitted++;
    return true;
  }

  leave(): void {
    this.admitted--;
  }
}
