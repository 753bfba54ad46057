import { Injectable } from '@nestjs/common';

/** Ingest counts as idle only after this long without a request in flight (exporters send back to back). */
const QUIET_MS = 250;

/**
 * How many OTLP requests are being ingested right now. Ingest uses it for its concurrency limit; the projector
 * uses `busy` to let a burst of ingest be acknowledged first (within a bounded lag, ERRATA_PROJECTION_MAX_LAG_MS).
 */
@Injectable()
export class IngestActivity {
  private active = 0;
  private lastEndedAt = 0;

  get inFlight(): number {
    return this.active;
  }

  get busy(): boolean {
    return this.active > 0 || Date.now() - this.lastEndedAt < QUIET_MS;
  }

  begin(): void {
    this.active++;
  }

  end(): void {
    this.active--;
    this.lastEndedAt = Date.now();
  }
}
