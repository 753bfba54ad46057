import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig, type AppConfig } from '../apps/server/src/config/app-config';
import * as domain from '../libs/domain/src/index';
import { newSecret, webhookHeaders } from '../apps/server/src/webhooks/standard-webhooks';
import { importReadmeBlock } from './support/readme-code';

const root = join(__dirname, '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** The README's configuration table: variable → default cell. */
function configurationTable(): Map<string, string> {
  const rows = [...readme.matchAll(/^\|\s*`([A-Z_]+)`\s*\|\s*([^|]+?)\s*\|/gm)];
  return new Map(rows.map((row) => [row[1]!, row[2]!.trim()]));
}

const NUMERIC_DEFAULTS: Partial<Record<(typeof CONFIG_VARIABLES)[number], keyof AppConfig>> = {
  PORT: 'port',
  ERRATA_MAX_BODY_BYTES: 'maxBodyBytes',
  ERRATA_BODY_TIMEOUT_MS: 'bodyTimeoutMs',
  ERRATA_MAX_ATTRIBUTE_BYTES: 'maxAttributeBytes',
  ERRATA_MAX_CONCURRENT_INGESTS: 'maxConcurrentIngests',
  ERRATA_MAX_DECODING_BYTES: 'maxDecodingBytes',
  ERRATA_PG_POOL_SIZE: 'poolSize',
  ERRATA_PG_QUERY_TIMEOUT_MS: 'queryTimeoutMs',
  ERRATA_MAX_CONCURRENT_READS: 'maxConcurrentReads',
  ERRATA_TEXT_LIMIT_BYTES: 'textLimitBytes',
  ERRATA_RETRY_WINDOW_MS: 'retryWindowMs',
  ERRATA_MAX_LINKED_TRACES: 'maxLinkedTraces',
  ERRATA_PROJECTION_POLL_MS: 'projectionPollMs',
  ERRATA_PROJECTION_YIELD_MS: 'projectionYieldMs',
  ERRATA_WEBHOOK_TIMEOUT_MS: 'webhookTimeoutMs',
  ERRATA_WEBHOOK_MAX_ATTEMPTS: 'webhookMaxAttempts',
  ERRATA_WEBHOOK_RETRY_BASE_MS: 'webhookRetryBaseMs',
  ERRATA_DELIVERY_POLL_MS: 'deliveryPollMs',
  ERRATA_FIX_INTERVAL_MS: 'fixIntervalMs',
  ERRATA_FIX_MIN_CALLS: 'fixMinCalls',
};

describe('README matches the code', () => {
  it('documents every configuration variable, and only those', () => {
    expect([...configurationTable().keys()].sort()).toEqual([...CONFIG_VARIABLES].sort());
  });

  it('gives the defaults the code uses', () => {
    const table = configurationTable();
    const defaults = loadConfig({});
    for (const [variable, field] of Object.entries(NUMERIC_DEFAULTS)) {
      expect(table.get(variable), variable).toContain(`\`${defaults[field!]}\``);
    }
  });

  it('names the two set-up commands and the test command that CI runs', () => {
    expect(readme).toMatch(/```sh\nnpm install\nnpm start\n```/);
    expect(readme).toMatch(/```sh\nnpm test\n```/);
    const ci = readFileSync(join(root, '.ci/run'), 'utf8');
    expect(ci).toMatch(/^npm ci\b/m);
    expect(ci).toMatch(/^npm test$/m);
  });

  it('gives the owners CLI example the fields of the curl example it says it is the same as', () => {
    const body = /-d '(\{"server":[^']*\})'/.exec(readme);
    const cli = /npm run errata -- owners add ((?:[^\n]|\\\n)*?)# the same/.exec(readme);
    expect(body, 'the curl example').not.toBeNull();
    expect(cli, 'the CLI example').not.toBeNull();
    const flags: Record<string, string> = {
      server: 'server',
      versionRange: 'version-range',
      webhookUrl: 'url',
      contact: 'contact',
    };
    for (const [field, value] of Object.entries(JSON.parse(body![1]!) as Record<string, string>)) {
      const quoted = value.includes(' ') ? `'${value}'` : value;
      expect(cli![1], field).toContain(`--${flags[field]} ${quoted}`);
    }
  });
});

describe("libs/domain's README matches the library", () => {
  const domainReadme = readFileSync(join(root, 'libs/domain/README.md'), 'utf8');

  it('lists every source file in its file table', () => {
    const table = [...domainReadme.matchAll(/^\| (`[a-z-]+\.ts`(?:, `[a-z-]+\.ts`)*) +\|/gm)]
      .flatMap((row) => row[1]!.split(', '))
      .map((name) => name.slice(1, -1));
    const sources = readdirSync(join(root, 'libs/domain/src')).filter(
      (file) => file.endsWith('.ts') && !/\.spec(-helper)?\.ts$/.test(file) && file !== 'index.ts',
    );
    expect(sources.filter((file) => !table.includes(file))).toEqual([]);
    expect(table.filter((file) => !sources.includes(file))).toEqual([]);
  });

  it('names in its exported API only functions and constants the library exports', () => {
    const api = /## Exported API\n\n```ts\n([\s\S]*?)^```$/m.exec(domainReadme)![1]!;
    const lines = api.split('\n').filter((line) => !line.startsWith('//'));
    const functions = lines.flatMap((line) => /^([a-zA-Z]+)\(/.exec(line)?.[1] ?? []);
    const constants = lines
      .filter((line) => /^[A-Z][A-Z_]+(,|$| \()/.test(line))
      .flatMap((line) => line.replace(/\s*(\/\/|\().*$/, '').split(/,\s*/))
      .filter((name) => /^[A-Z][A-Z_]+$/.test(name));
    expect(functions.length + constants.length).toBeGreaterThan(50);
    expect([...functions, ...constants].filter((name) => !(name in domain))).toEqual([]);
  });
});

type Verify = (secret: string, headers: Record<string, string>, body: string, now?: number) => boolean;
type VerifyWithPackage = (secret: string, headers: Record<string, string>, body: string) => unknown;

describe("README's webhook verification, run as written", () => {
  const secrets = [newSecret(), newSecret()]; // mid-rotation: the new and the previous one sign
  const body = JSON.stringify({
    type: 'errata.fix.suggested',
    timestamp: '2026-12-01T10:00:00.000Z',
    data: {
      fix: { findingId: '0123456789abcdef0123', state: 'suggested', badVersions: ['1.0.0'] },
      note: 'é ✓',
    },
  });
  const now = Date.UTC(2026, 11, 1, 10, 0, 0);
  const headers = webhookHeaders(secrets, 'msg_0123456789', body, now);

  it('accepts what the signer signs, with either live secret, and refuses a forgery, a replay or a stranger', async () => {
    const { verifyErrataWebhook } = await importReadmeBlock<{ verifyErrataWebhook: Verify }>(
      'verifyErrataWebhook',
    );
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const secret of secrets) expect(verifyErrataWebhook(secret, headers, body, now)).toBe(true);
    expect(verifyErrataWebhook(secrets[0]!, headers, body, now + 4 * 60_000)).toBe(true);
    expect(verifyErrataWebhook(secrets[0]!, headers, body.replace('1.0.0', '1.0.1'), now)).toBe(false);
    expect(verifyErrataWebhook(secrets[0]!, { ...headers, 'webhook-id': 'msg_other' }, body, now)).toBe(
      false,
    );
    expect(verifyErrataWebhook(secrets[0]!, headers, body, now + 6 * 60_000)).toBe(false);
    expect(verifyErrataWebhook(secrets[0]!, { ...headers, 'webhook-timestamp': 'soon' }, body, now)).toBe(
      false,
    );
    expect(verifyErrataWebhook(newSecret(), headers, body, now)).toBe(false);
  });

  it('the standardwebhooks alternative takes the same message', async () => {
    const { verifyWithPackage } = await importReadmeBlock<{ verifyWithPackage: VerifyWithPackage }>(
      'verifyWithPackage',
    );
    const fresh = webhookHeaders(secrets, 'msg_0123456789', body); // the package checks against its own clock
    for (const secret of secrets) expect(verifyWithPackage(secret, fresh, body)).toEqual(JSON.parse(body));
    expect(() => verifyWithPackage(newSecret(), fresh, body)).toThrow();
  });
});
