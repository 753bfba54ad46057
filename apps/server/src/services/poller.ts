/** The longest a loop waits after failures in a row before it tries again (unless its interval is longer). */
export const MAX_BACKOFF_MS = 30_000;

/**
 * A background loop: runs `work` every `intervalMs` (or at once after `wake()`), one run at a time, until stopped.
 * A failed run is reported and the loop goes on, after a wait that doubles with each failure in a row, up to
 * MAX_BACKOFF_MS, and that `wake()` does not cut short: a database that times out every statement, woken by every
 * ingest request, was otherwise tried, and logged, without pause.
 *
 * `work` is given a signal aborted by `stop()`: a run over a backlog (every due webhook, every finding of an owned
 * server) ends after the step in flight, not after the backlog. `stop()` waits for the run, and a stop that waited for
 * a backlog of thousands kept the process alive for minutes after SIGTERM.
 */
export class Poller {
  private running = false;
  private stopping = new AbortController();
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private pendingWake = false;
  private failuresInARow = 0;

  constructor(
    private readonly intervalMs: number,
    private readonly work: (stopping: AbortSignal) => Promise<unknown>,
    private readonly onError: (error: unknown, retryInMs: number) => void,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = new AbortController();
    this.loop = this.run(this.stopping.signal);
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopping.abort();
    this.wakeUp?.();
    await this.loop;
  }

  wake(): void {
    this.pendingWake = true;
    if (this.failuresInARow === 0) this.wakeUp?.();
  }

  private async run(stopping: AbortSignal): Promise<void> {
    while (this.running) {
      try {
        await this.work(stopping);
        this.failuresInARow = 0;
      } catch (error) {
        this.failuresInARow++;
        this.onError(error, this.backoffMs());
      }
      if (!this.running) break;
      if (this.pendingWake && this.failuresInARow === 0) {
        this.pendingWake = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.failuresInARow === 0 ? this.intervalMs : this.backoffMs());
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = null;
      this.pendingWake = false;
    }
  }

  private backoffMs(): number {
    const doubled = this.intervalMs * 2 ** this.failuresInARow;
    return Math.max(this.intervalMs, Math.min(doubled, MAX_BACKOFF_MS));
  }
}
