/**
 * Preloaded into the Errata the demo starts (`node --require errata-leash.js apps/server/dist/main.js`), so that it
 * stops when the demo goes away, however it went (SIGKILL, a crash): it ran on, holding the port and the demo's
 * store under keys nobody had, and the next `npm run demo` found it and asked for those keys. The demo holds the
 * write end of this process's standard input and never writes to it: the kernel closes that pipe when the demo's
 * process ends, and this hands Errata the SIGTERM the demo would have sent (it drains, and closes its store).
 */
let stopping = false;

function stopErrata(): void {
  if (stopping) return;
  stopping = true;
  // Errata's log lines go to the demo's pipes, which are closed now: a write must not crash its shutdown (EPIPE).
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  // No listener: Errata is stopping already (Nest's shutdown hooks remove theirs as they begin), and another
  // SIGTERM would go to Node's default action, an exit in the middle of the drain.
  if (process.listenerCount('SIGTERM') > 0) process.kill(process.pid, 'SIGTERM');
}

process.stdin.on('end', stopErrata);
process.stdin.on('error', stopErrata);
process.stdin.resume();
// Reading the pipe must not keep Errata alive once its own shutdown has closed everything else.
(process.stdin as { unref?: () => void }).unref?.();

// A closed terminal sends SIGHUP to the whole process group, this Errata too: it would stop at once, before the demo
// has flushed its spans to it. The demo hears it as well and stops this Errata (SIGTERM) once it has cleaned up; if
// the demo is gone, the pipe is. Listening here, before Errata's modules load, leaves SIGHUP to this (STOP_SIGNALS).
process.on('SIGHUP', () => undefined);
