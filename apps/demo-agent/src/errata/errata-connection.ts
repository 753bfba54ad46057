/**
 * Finds Errata or starts it. An Errata that answers `GET /healthz` at ERRATA_URL is used as it is, with the
 * caller's keys. Otherwise the demo starts the built server on that URL's port, on a store of its own
 * (DEMO_DATA_DIR or DEMO_DATABASE_URL), with project `default`'s keys set from ERRATA_INGEST_KEY /
 * ERRATA_READ_KEY, or freshly generated ones.
 */
import { randomBytes } from 'node:crypto';
import type { DemoConfig } from '../config/demo-config';
import { DemoError } from '../demo-error';
import { checkIngestKey, checkReadKey, statusOf } from './errata-http';
import { startErrataProcess, type ErrataProcess } from './errata-process';

export interface ErrataConnection {
  readonly url: string;
  readonly ingestKey: string;
  /** Null when Errata was running already and ERRATA_READ_KEY was not given. */
  readonly readKey: string | null;
  /** The process the demo started; null when Errata was running already. */
  readonly process: ErrataProcess | null;
  /** Keys the demo generated (so it can say they replaced earlier ones). */
  readonly generatedKeys: boolean;
  /** Where an Errata the demo started keeps its events, which earlier runs share; null when Errata was running. */
  readonly store: string | null;
}

/** Loopback hosts the demo can start Errata on, and the HOST Errata then listens on. */
const LOCAL_HOSTS: Readonly<Record<string, string>> = {
  localhost: '127.0.0.1',
  '127.0.0.1': '127.0.0.1',
  '[::1]': '::1',
};

const generatedKey = (scope: string): string => `errata_${scope}_${randomBytes(24).toString('base64url')}`;

export async function connectToErrata(
  config: DemoConfig,
  log: (line: string) => void,
): Promise<ErrataConnection> {
  const url = config.errataUrl;
  const health = await statusOf(`${url}/healthz`);
  if (health !== null && health !== 200) {
    throw new DemoError(
      `something that is not Errata answers at ${url} (GET /healthz → ${health}); set ERRATA_URL to Errata's ` +
        'URL, or to a free port for the demo to start its own Errata',
    );
  }
  if (health === 200) {
    if (config.ingestKey === null) {
      throw new DemoError(
        `Errata answers at ${url}, but ERRATA_INGEST_KEY is not set. If an earlier \`npm run demo\` started it, ` +
          'set ERRATA_INGEST_KEY and ERRATA_READ_KEY to the keys it printed ("Keys of project "default" in the ' +
          'Errata the demo started"), or stop it (Ctrl-C there) and run the demo again. For an Errata of your ' +
          'own, use an ingest key of its project. Or point ERRATA_URL at a free port and DEMO_DATA_DIR at another ' +
          'directory, and the demo starts its own (the running one holds the default store).',
      );
    }
    await checkIngestKey(url, config.ingestKey);
    if (config.readKey !== null) await checkReadKey(url, config.readKey);
    log(`Using the Errata running at ${url}.`);
    return {
      url,
      ingestKey: config.ingestKey,
      readKey: config.readKey,
      process: null,
      generatedKeys: false,
      store: null,
    };
  }

  const parsed = new URL(url);
  const host = LOCAL_HOSTS[parsed.hostname];
  if (host === undefined || parsed.protocol !== 'http:' || parsed.pathname !== '/') {
    throw new DemoError(
      `nothing answers at ${url}/healthz, and the demo starts Errata itself only for a local http:// URL ` +
        `such as http://127.0.0.1:4318`,
    );
  }
  const ingestKey = config.ingestKey ?? generatedKey('ingest');
  const readKey = config.readKey ?? generatedKey('read');
  log(`Nothing answers at ${url}: starting Errata (apps/server/dist/main.js)…`);
  const { DATABASE_URL: _userStore, ...environment } = process.env;
  const started = await startErrataProcess(url, {
    ...environment,
    ...(config.databaseUrl === null ? {} : { DATABASE_URL: config.databaseUrl }),
    PORT: parsed.port === '' ? '80' : parsed.port,
    HOST: host,
    ERRATA_DATA_DIR: config.dataDir,
    ERRATA_INGEST_KEY: ingestKey,
    ERRATA_READ_KEY: readKey,
  });
  log(
    `Errata started (pid ${started.pid}): ${started.listening?.replace(/^.*?listening on/, 'listening on') ?? url}`,
  );
  return {
    url,
    ingestKey,
    readKey,
    process: started,
    generatedKeys: config.ingestKey === null || config.readKey === null,
    store:
      config.databaseUrl === null
        ? `the embedded database in ${config.dataDir} (delete that directory to start afresh)`
        : 'the PostgreSQL database at DEMO_DATABASE_URL',
  };
}
