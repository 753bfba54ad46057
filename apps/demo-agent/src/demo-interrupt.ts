/**
 * Ctrl-C or SIGTERM while the demo plays: the step under way finishes, then the demo stops what it started (the MCP
 * servers, its temporary workspace, the Errata it started) and exits with 130. A second signal exits at once.
 */
import { DemoError } from './demo-error';

export class DemoInterrupted extends DemoError {
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`);
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
  let received: NodeJS.Signals | null = null;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (received !== null) process.exit(130);
    received = signal;
    log('');
    log(`${signal}: stopping what the demo started… (again to quit at once)`);
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return {
    check: () => {
      if (received !== null) throw new DemoInterrupted(received);
    },
    release: () => {
      for (const signal of SIGNALS) process.off(signal, onSignal);
    },
  };
}
