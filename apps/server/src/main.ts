/**
 * `node apps/server/dist/main.js`. Loading the server's modules (Nest and the app, start-server.ts) takes seconds, and
 * a stop signal meanwhile went to Node's default action: the process ended without a word. So the stop signals are
 * heard before anything else loads, with only what this file imports (nothing of Nest), and the server is loaded
 * after: a stop that came meanwhile is said once there is a logger, and startup goes no further.
 */
import { jsonLogLine } from './config/json-log-line';
import { StartupSignals, StoppedDuringStartup } from './http/startup-signals';

if (require.main === module) {
  const signals = new StartupSignals();
  import('./start-server.js')
    .then(({ startServer }) => startServer(undefined, undefined, signals))
    .catch((error: unknown) => {
      signals.remove();
      // As Nest's shutdown hooks end a stop: the signal again, to Node's default action now (the exit status says it).
      if (error instanceof StoppedDuringStartup) return void process.kill(process.pid, error.signal);
      const message = `Errata failed to start: ${error instanceof Error ? error.message : String(error)}`;
      // Read here, not from the config: the failure may be the config's.
      const json = process.env['ERRATA_LOG_FORMAT']?.trim().toLowerCase() === 'json';
      process.stderr.write(json ? jsonLogLine('error', 'Errata', message) : `${message}\n`);
      process.exit(1);
    });
}
