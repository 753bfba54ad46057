/**
 * Ctrl-C, SIGTERM or SIGHUP (its terminal closed) while the demo plays: the step under way finishes, then the demo
 * stops what it started (the MCP servers, its temporary workspace, the Errata it started) and exits as a shell
 * reports that signal: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP. A second signal a moment later is the same
 * Ctrl-C (see SAME_INTERRUPT_MS); one after that exits at once.
 * Its output closed (`npm run demo | head`) is an interruption too, exit 141 as a shell reports SIGPIPE: a write
 * to the closed pipe used to crash the demo and leave the Errata it started running, with keys it never printed.
 */
import { constants } from 'node:os';
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
    return this.interruptedBy === 'closed output' ? 141 : signalExitCode(this.interruptedBy);
  }
}

/**
 * 128 + the signal's number, the shell's status for a process a signal ended: a process manager or a script told
 * SIGTERM from SIGINT, which every signal's 130 hid.
 */
function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + constants.signals[signal];
}

export interface Interruption {
  /** Throws DemoInterrupted once a signal has come. */
  check(): void;
  /** Resolves with the first interruption, whenever it comes. */
  readonly interrupted: Promise<InterruptCause>;
  /** Stops listening: the signals are someone else's again. */
  release(): void;
}

// SIGHUP: the terminal closed. Node's default action ended the demo at once, leaving its workspace behind.
const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * A terminal's Ctrl-C reaches the demo twice under `npm run demo`, milliseconds apart: the terminal sends SIGINT to
 * the whole foreground process group, and npm forwards the SIGINT it got to its script. Taken as "again to quit at
 * once", that second copy skipped every cleanup (workspace, spans, the Errata the demo started). A person asking
 * again takes longer than this.
 */
const SAME_INTERRUPT_MS = 1_000;

export function listenForInterrupt(log: (line: string) => void): Interruption {
  let received: InterruptCause | null = null;
  let receivedAt = 0;
  let resolveInterrupted!: (cause: InterruptCause) => void;
  const interrupted = new Promise<InterruptCause>((resolve) => (resolveInterrupted = resolve));
  const interrupt = (cause: InterruptCause): void => {
    if (received !== null) return;
    received = cause;
    receivedAt = Date.now();
    resolveInterrupted(cause);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (received !== null) {
      if (Date.now() - receivedAt >= SAME_INTERRUPT_MS) process.exit(signalExitCode(signal));
      return;
    }
    interrupt(signal);
    log('');
    log(`${signal}: stopping what the demo started… (again to quit at once)`);
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  // Kept for good: every later line written to a closed pipe fails the same way, cleanup's included.
  // Its standard error too (`npm run demo 2>&1 | head`): "Demo interrupted" written there must not crash it.
  // EIO: a write to the terminal that closed (SIGHUP), while the demo cleans up.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'EIO') throw error;
      interrupt('closed output');
    });
  }
  return {
    check: () => {
      if (received !== null) throw new DemoInterrupted(received);
    },
    interrupted,
    release: () => {
      for (const signal of SIGNALS) process.off(signal, onSignal);
    },
  };
}
