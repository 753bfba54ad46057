/**
 * Ctrl-C or SIGTERM while the demo plays: the step under way finishes, then the demo stops what it started (the MCP
 * servers, its temporary workspace, the Errata it started) and exits with 130. A second signal exits at once.
 * Its output closed (`npm run demo | head`) is an interruption too, exit 141 as a shell reports SIGPIPE: a write
 * to the closed pipe used to crash the demo and leave the Errata it started running, with keys it never printed.
 */
import { DemoError } from './demo-error';

/** What interrupted the demo: a signal, or its standard output closed. */
export type InterruptCause = NodeJS.Signals | 'closed output';

export class DemoInterrupted extends DemoError {
  constructor(readonly interruptedBy: InterruptCause) {
    super(
      interruptedBy === 'closed output'
        ? 'interrupted: its output was closed'
        : `interrupted by ${interruptedBy}`,
    );
  }

  get exitCode(): number {
    return this.interruptedBy === 'closed output' ? 141 : 130;
  }
}

export interface Interruption {
  /** Throws DemoInterrupted once a signal has come. */
  check(): void;
  /** Stops listening: the signals are someone else's again. */
  release(): void;
}

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

export function listenForInterrupt(log: (line: string) => void): Interruption {
  let received: InterruptCause | null = null;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (received !== null) process.exit(130);
    received = signal;
    log('');
    log(`${signal}: stopping what the demo started… (again to quit at once)`);
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  // Kept for good: every later line written to a closed pipe fails the same way, cleanup's included.
  // Its standard error too (`npm run demo 2>&1 | head`): "Demo interrupted" written there must not crash it.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      received ??= 'closed output';
    });
  }
  return {
    check: () => {
      if (received !== null) throw new DemoInterrupted(received);
    },
    release: () => {
      for (const signal of SIGNALS) process.off(signal, onSignal);
    },
  };
}
