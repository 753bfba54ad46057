import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const SERVER_ENTRY = join(__dirname, '../../apps/server/dist/main.js');

export async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, 'close');
  return port;
}

/**
 * The built server (`npm run build`) as its own process, as users run it; resolves once /readyz answers 200. With
 * `preload`, that module is loaded first (`node --require`), its standard input a pipe kept open (as the demo's leash
 * wants it).
 */
export async function spawnServer(
  env: Record<string, string>,
  preload?: string,
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [...(preload === undefined ? [] : ['--require', preload]), SERVER_ENTRY],
    {
      env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
      stdio: [preload === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  // An embedded store starting on a busy machine (PGlite loads and migrates) can take more than half a minute.
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output}`);
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return { child, url, output: () => output };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not become ready:\n${output}`);
}
