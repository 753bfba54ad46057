import type { LoggerService } from '@nestjs/common';

/**
 * The signals that stop Errata, during startup as once it listens (Nest's shutdown hooks). SIGHUP is its terminal
 * closing (Errata reloads nothing: its settings are read once, at start), whose default action ended it at once,
 * mid-request, its pool not closed. Unless a module preloaded before Errata's (`node --require`) listens for SIGHUP
 * already, and so decides what a hangup does: the demo's leash ignores it, to stop its Errata once it has cleaned up.
 */
export const STOP_SIGNALS: readonly NodeJS.Signals[] =
  process.listenerCount('SIGHUP') > 0 ? ['SIGTERM', 'SIGINT'] : ['SIGTERM', 'SIGINT', 'SIGHUP'];

/** Startup ended early: a stop signal came before the server listened, and what was opened is closed again. */
export class StoppedDuringStartup extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`${signal} during startup: stopped`);
  }
}

/**
 * A stop signal (STOP_SIGNALS) while Errata starts, before Nest's shutdown hooks take over (once it listens). A first start on
 * embedded PGlite spends seconds opening the store and migrating it: a signal then went unsaid (Node's default, an
 * exit mid-migration) or, once Nest's hooks were on, stopping began while startup went on to create the first keys
 * and say it listened. Here the stop is said at once, and startup asks (`received`) between its steps, closes what it
 * opened and goes no further.
 *
 * Heard from before the server's modules load (main.ts), when there is no logger yet: a stop then is said as soon as
 * there is one (`sayWith`).
 */
export class StartupSignals {
  private signal: NodeJS.Signals | null = null;
  private logger: LoggerService | null = null;
  private said = false;
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    if (this.signal !== null) return;
    this.signal = signal;
    this.say();
  };

  constructor() {
    for (const signal of STOP_SIGNALS) process.on(signal, this.onSignal);
  }

  /** Says the stop in `logger`'s lines: at once if it came already, else when it comes. */
  sayWith(logger: LoggerService): void {
    this.logger = logger;
    this.say();
  }

  private say(): void {
    if (this.said || this.signal === null || this.logger === null) return;
    this.said = true;
    this.logger.log(`${this.signal}: stopping`, 'Errata');
  }

  /**
   * The signal received so far (said in the log already, once there is a logger; null: none), once the event loop
   * has turned: Node hands a signal to its listeners only then, and a startup on embedded PGlite runs in the one
   * thread, from the store's queries to Nest's hooks, in promises alone. Two turns' immediates: asked from an I/O
   * callback (the server's modules, loaded for seconds by `import()`), the first runs in that same turn, before Node
   * has looked for signals again.
   */
  async received(): Promise<NodeJS.Signals | null> {
    for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
    return this.signal;
  }

  /** Hands over to Nest's shutdown hooks (or leaves the signals to Node, when startup failed). */
  remove(): void {
    for (const signal of STOP_SIGNALS) process.removeListener(signal, this.onSignal);
  }
}
