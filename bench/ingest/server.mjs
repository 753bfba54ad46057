// The built server as a child process per ingest run: its own port and database, ready when /readyz says so.
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { urlFor } from './postgres.mjs';
import {
  LOG_TAIL_BYTES,
  READY_TIMEOUT_MS,
  ROOT,
  SERVER_ENTRY,
  SERVER_EXIT_HOOK,
  SERVER_NODE_OPTIONS,
  STOP_TIMEOUT_MS,
  serverEnv,
} from './settings.mjs';

/** Started and not yet exited, so an interrupted or failed invocation can still stop them. */
export const liveServers = new Set();

function freePort() {
  return new Promise((resolvePort, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolvePort(port));
    });
  });
}

function httpGet(port, path) {
  return new Promise((resolveGet, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, timeout: 5_000, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolveGet(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** Starts the built server on `database`; `extraEnv` adds to (or overrides) its environment. */
export async function startServer(database, extraEnv = {}) {
  const port = await freePort();
  const args = [
    ...SERVER_NODE_OPTIONS,
    ...(SERVER_NODE_OPTIONS.length > 0 ? ['--require', SERVER_EXIT_HOOK] : []),
    SERVER_ENTRY,
  ];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...serverEnv(urlFor(database), port), ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const server = { child, port, pid: child.pid, log: '', exit: null };
  const keep = (chunk) => {
    server.log = (server.log + chunk.toString('utf8')).slice(-LOG_TAIL_BYTES);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  server.exited = new Promise((resolveExit) =>
    child.once('exit', (code, signal) => {
      server.exit = { code, signal };
      liveServers.delete(server);
      resolveExit(server.exit);
    }),
  );
  liveServers.add(server);
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (server.exit) throw new ServerError(server, 'server exited before it was ready');
    const status = await httpGet(port, '/readyz').catch(() => null);
    if (status === 200) return server;
    if (Date.now() > deadline)
      throw new ServerError(server, `GET /readyz not 200 after ${READY_TIMEOUT_MS} ms`);
    await sleep(100);
  }
}

export async function stopServer(server) {
  if (server.exit) return server.exit;
  server.child.kill('SIGTERM');
  const timeout = sleep(STOP_TIMEOUT_MS).then(() => null);
  const exit = await Promise.race([server.exited, timeout]);
  if (exit) return exit;
  console.error(`  server ${server.pid} ignored SIGTERM for ${STOP_TIMEOUT_MS} ms: SIGKILL`);
  server.child.kill('SIGKILL');
  return server.exited;
}

export class ServerError extends Error {
  constructor(server, message) {
    const exit = server.exit ? ` (exit code ${server.exit.code}, signal ${server.exit.signal})` : '';
    super(`${message}${exit}; last server output:\n${server.log.trim() || '(none)'}`);
  }
}
