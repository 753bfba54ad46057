import { Injectable } from '@nestjs/common';

/**
 * The OTLP requests being stored right now (their bodies have arrived). The projector waits for a moment without any
 * before each background batch (at most `ERRATA_PROJECTION_YIELD_MS`): during a burst the CPU goes to acknowledging
 * spans, which exporters drop when acknowledgements come too slowly, and the read models catch up as soon as the
 * burst pauses. A body still arriving uses no CPU and is not counted here (IngestService counts the places taken).
 * On the embedded store every other request counts too (`countEmbeddedStoreRequests`).
 */
@Injectable()
export class IngestActivity {
  private inFlight = 0;
  private readonly waiting = new Set<() => void>();

  get requestsInFlight(): number {
    return this.inFlight;
  }

  begin(): void {
    this.inFlight++;
  }

  end(): void {
    this.inFlight--;
    if (this.inFlight > 0) return;
    for (const release of [...this.waiting]) release();
  }

  /** Resolves once no request is in flight, after `maxWaitMs` at the latest, or as soon as `signal` aborts. */
  quiet(maxWaitMs: number, signal?: AbortSignal): Promise<void> {
    if (this.inFlight === 0 || maxWaitMs <= 0 || signal?.aborted === true) return Promise.resolve();
    return new Promise((resolve) => {
      const release = () => {
        clearTimeout(timer);
        this.waiting.delete(release);
        signal?.removeEventListener('abort', release);
        resolve();
      };
      const timer = setTimeout(release, maxWaitMs);
      this.waiting.add(release);
      signal?.addEventListener('abort', release, { once: true });
    });
  }
}
