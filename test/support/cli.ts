import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** The built CLI (`npm run errata`). */
export const CLI = join(__dirname, '../../apps/server/dist/cli/errata.js');

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built CLI on `databaseUrl` to its end: its exit code and both outputs, whether it failed or not. */
export function runCli(databaseUrl: string, ...args: string[]): Promise<CliRun> {
  return runCliWithEnv({ DATABASE_URL: databaseUrl }, ...args);
}

/** Runs the built CLI with `env` added to this process's environment, as `runCli` does. */
export function runCliWithEnv(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  return promisify(execFile)(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...env },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: CliRun) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}
