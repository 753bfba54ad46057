/** An Errata server the demo starts itself: the built `apps/server`, as its own process. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stripVTControlCharacters } from 'node:util';
import { DemoError } from '../demo-error';
import { answers } from './errata-http';

/** apps/demo-agent/dist/errata → apps/server/dist/main.js */
const SERVER_ENTRY = join(__dirname, '..', '..', '..', 'server', 'dist', 'main.js');
/** Stops that Errata when the demo's process ends, however it ends (errata-leash.ts). */
const LEASH = join(__dirname, 'errata-leash.js');

const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
const OUTPUT_LINES_KEPT = 40;

export interface ErrataProcess {
  readonly pid: number;
  /** The server's "listening on … — store: …" line. */
  readonly listening: string | null;
  /** Its store was new: this start created it (applied the first migration), so no earlier run left keys or events. */
  readonly newStore: boolean;
  /** Resolves when the process has exited, however it ended. */
  readonly exited: Promise<void>;
  stop(): Promise<void>;
}

/** The last lines a process wrote, for an error message that shows why it failed. */
class OutputTail {
  private lines: string[] = [];
  /** Errata says `applied 0001_event_log, …` (Migrations) when it migrates a store that has none of its tables. */
  firstMigrationApplied = false;

  add(chunk: Buffer): void {
    const lines = stripVTControlCharacters(chunk.toString())
      .split('\n')
      .filter((line) => line.trim() !== '');
    // Seen as it comes: Nest's route lines that follow would push it out of the tail.
    if (lines.some((line) => /\bapplied 0001_/.test(line))) this.firstMigrationApplied = true;
    this.lines.push(...lines);
    if (this.lines.length > OUTPUT_LINES_KEPT) this.lines = this.lines.slice(-OUTPUT_LINES_KEPT);
  }

  find(text: string): string | null {
    return this.lines.find((line) => line.includes(text)) ?? null;
  }

  /** The lines that report an error (a failed start logs every route first), else all of them. */
  toString(): string {
    const errors = this.lines.filter((line) => /\berror\b|\bE[A-Z]{4,}\b|failed/i.test(line));
    const shown = errors.length > 0 ? errors : this.lines;
    return shown.length === 0 ? '(no output)' : shown.map((line) => `  | ${line}`).join('\n');
  }
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM'); // Errata drains in-flight requests and closes its database on SIGTERM
  // The timer must not keep the demo alive once Errata has exited.
  const timeout = sleep(STOP_TIMEOUT_MS, false, { ref: false });
  const stopped = await Promise.race([exited.then(() => true), timeout]);
  if (!stopped) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** Starts Errata with `env` and resolves once `GET {url}/readyz` answers 200. */
export async function startErrataProcess(url: string, env: NodeJS.ProcessEnv): Promise<ErrataProcess> {
  if (!existsSync(SERVER_ENTRY)) {
    throw new DemoError(
      `the Errata server is not built (${SERVER_ENTRY} is missing); run \`npm run build\` first`,
    );
  }
  // Its standard input is the leash's pipe: the demo never writes to it, and its end closes when the demo exits.
  const child = spawn(process.execPath, ['--require', LEASH, SERVER_ENTRY], {
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const output = new OutputTail();
  child.stdout!.on('data', (chunk: Buffer) => output.add(chunk));
  child.stderr!.on('data', (chunk: Buffer) => output.add(chunk));
  const exited = once(child, 'exit').then(() => undefined);
  const spawned = await Promise.race([
    once(child, 'spawn').then(() => null),
    once(child, 'error').then(([error]) => error as Error),
  ]);
  if (spawned !== null) throw new DemoError(`could not start Errata: ${spawned.message}`);

  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new DemoError(
        `Errata exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${output}`,
      );
    }
    if (await answers(`${url}/readyz`)) {
      return {
        pid: child.pid!,
        listening: output.find('listening on'),
        newStore: output.firstMigrationApplied,
        exited,
        stop: () => stopChild(child, exited),
      };
    }
    await sleep(200);
  }
  await stopChild(child, exited);
  throw new DemoError(`Errata did not become ready within ${READY_TIMEOUT_MS / 1000} s:\n${output}`);
}
