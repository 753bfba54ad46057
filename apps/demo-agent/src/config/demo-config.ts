/** The demo's knobs, all environment variables (apps/demo-agent/README.md). */
import { isIPv6 } from 'node:net';
import { resolve } from 'node:path';
import { DemoError } from '../demo-error';

const DEFAULT_ERRATA_URL = 'http://127.0.0.1:4318';
const DEFAULT_EPISODES = 5;
const MAX_EPISODES = 1000;

export interface DemoConfig {
  /** Errata's base URL, without a trailing slash. */
  readonly errataUrl: string;
  readonly ingestKey: string | null;
  readonly readKey: string | null;
  readonly episodes: number;
  /**
   * The store of an Errata started by the demo: its own embedded database (DEMO_DATA_DIR), or DEMO_DATABASE_URL.
   * Never the user's ERRATA_DATA_DIR / DATABASE_URL: the demo's generated keys would replace that store's keys.
   */
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  /** Keep an Errata started by the demo running afterwards; null: only when the demo runs in a terminal. */
  readonly keepServer: boolean | null;
}

const nonEmpty = (value: string | undefined): string | null =>
  value === undefined || value.trim() === '' ? null : value.trim();

function errataUrl(raw: string | null): string {
  const text = raw ?? DEFAULT_ERRATA_URL;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new DemoError(`ERRATA_URL must be a URL such as ${DEFAULT_ERRATA_URL}; got "${text}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new DemoError(`ERRATA_URL must be an http:// or https:// URL; got "${text}"`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * Errata's URL without ERRATA_URL: from PORT and HOST, read as Errata reads them (apps/server/src/config/app-config.ts:
 * 4318 and 0.0.0.0 by default), so that with PORT=5000 set the demo uses that Errata (or starts one there), rather
 * than a second Errata on 4318. A wildcard address is where Errata listens, not one to connect to: its loopback.
 */
function errataUrlFromPortAndHost(env: NodeJS.ProcessEnv): string | null {
  const rawPort = nonEmpty(env['PORT']);
  const rawHost = nonEmpty(env['HOST']);
  if (rawPort === null && rawHost === null) return null;
  const port = rawPort === null ? 4318 : Number(rawPort);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new DemoError(`PORT must be an integer between 0 and 65535, got "${rawPort}"`);
  }
  if (port === 0) {
    throw new DemoError(
      "PORT=0 has Errata listen on any free port, which the demo cannot guess; set ERRATA_URL to Errata's URL",
    );
  }
  const host = rawHost === null || rawHost === '0.0.0.0' ? '127.0.0.1' : rawHost === '::' ? '::1' : rawHost;
  const text = `http://${isIPv6(host) ? `[${host}]` : host}:${port}`;
  if (!URL.canParse(text)) throw new DemoError(`HOST must be a host name or an IP address; got "${rawHost}"`);
  return text;
}

function episodes(raw: string | null): number {
  if (raw === null) return DEFAULT_EPISODES;
  const value = /^\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN; // not 1e3 or 0x5
  if (!Number.isInteger(value) || value < 1 || value > MAX_EPISODES) {
    throw new DemoError(`DEMO_EPISODES must be a whole number from 1 to ${MAX_EPISODES}; got "${raw}"`);
  }
  return value;
}

function keepServer(raw: string | null): boolean | null {
  if (raw === null) return null;
  if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
  throw new DemoError(`DEMO_KEEP_SERVER must be 1 or 0; got "${raw}"`);
}

export function readDemoConfig(env: NodeJS.ProcessEnv): DemoConfig {
  return {
    errataUrl: errataUrl(nonEmpty(env['ERRATA_URL']) ?? errataUrlFromPortAndHost(env)),
    ingestKey: nonEmpty(env['ERRATA_INGEST_KEY']),
    readKey: nonEmpty(env['ERRATA_READ_KEY']),
    episodes: episodes(nonEmpty(env['DEMO_EPISODES'])),
    dataDir: resolve(nonEmpty(env['DEMO_DATA_DIR']) ?? '.errata-demo'),
    databaseUrl: nonEmpty(env['DEMO_DATABASE_URL']),
    keepServer: keepServer(nonEmpty(env['DEMO_KEEP_SERVER'])),
  };
}

/** What `--help` prints: the demo takes no arguments, only the variables of apps/demo-agent/README.md. */
export const DEMO_USAGE = [
  'Usage: npm run demo   (or: node apps/demo-agent/dist/main.js)',
  '',
  'Plays scripted agents against real MCP servers, instrumented with @errata/sdk, and prints what Errata reports.',
  'It takes no arguments; these environment variables configure it (apps/demo-agent/README.md):',
  `  DEMO_EPISODES       episodes to play, 1-${MAX_EPISODES} (default ${DEFAULT_EPISODES})`,
  `  ERRATA_URL          Errata to use, or to start on this port (default ${DEFAULT_ERRATA_URL})`,
  "  PORT, HOST          without ERRATA_URL: Errata's own port and address (as `npm start` reads them)",
  '  ERRATA_INGEST_KEY   required when Errata runs already; generated when the demo starts it',
  "  ERRATA_READ_KEY     for Errata's figures and the curl lines; generated when the demo starts it",
  '  DEMO_DATA_DIR       embedded database of an Errata the demo starts (default ./.errata-demo)',
  '  DEMO_DATABASE_URL   PostgreSQL for an Errata the demo starts, instead',
  '  DEMO_KEEP_SERVER    1 or 0: keep an Errata the demo started running (default: 1 in a terminal)',
].join('\n');

/**
 * The command line: `--help` (or `-h`) asks for the usage; anything else is refused rather than ignored, since a
 * demo that played with its defaults would send a run of spans the user did not ask for.
 */
export function wantsHelp(args: readonly string[]): boolean {
  if (args.length === 0) return false;
  if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) return true;
  throw new DemoError(
    `the demo takes no arguments (got ${args.join(' ')}); set environment variables instead, e.g. ` +
      'DEMO_EPISODES=1 npm run demo. --help lists them.',
  );
}
