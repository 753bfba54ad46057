import type { LoggerService } from '@nestjs/common';

/** The signals that stop Errata, during startup as once it listens (Nest's shutdown hooks). */
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/** Startup ended early: a stop signal came before the server listened, and what was opened is closed again. */
export class StoppedDuringStartup extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`${signal} during startup: stopped`);
  }
}

/**
 * SIGTERM/SIGINT while Errata starts, before Nest's shutdown hooks take over (once it listens). A first start on
 * embedded PGlite spends seconds opening the store and migrating it: a signal then went unsaid (Node's default, an
 * exit mid-migration) or, once Nest's hooks were on, stopping began while startup went on to create the first keys
 * and say it listened. Here the stop is said at once, and startup asks (`received`) between its steps, closes what it
 * opened and goes no further.
 */
export class StartupSignals {
  private signal: NodeJS.Signals | null = null;
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    if (this.signal !== null) return;
    this.signal = signal;
    this.logger.log(`${signal}: stopping`, 'Errata');
  };

  constructor(private readonly logger: LoggerService) {
    for (const signal of STOP_SIGNALS) process.on(signal, this.onSignal);
  }

  /**
   * The signal received so far (said in the log already; null: none), once the event loop has turned: Node hands a signal to its listeners only then, and a
   * startup on embedded PGlite runs in the one thread, from the store's queries to Nest's hooks, in promises alone.
   */
  async received(): Promise<NodeJS.Signals | null> {
    await new Promise((resolve) => setImmediate(resolve));
    return this.signal;
  }

  /** Hands over to Nest's shutdown hooks (or leaves the signals to Node, when startup failed). */
  remove(): void {
    for (const signal of STOP_SIGNALS) process.removeListener(signal, this.onSignal);
  }
}
