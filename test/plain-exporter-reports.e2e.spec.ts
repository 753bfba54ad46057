/**
 * Reports over spans a plain OpenTelemetry exporter sends (OTLP/JSON, no Errata SDK): what the SDK would have worked
 * out on the agent's side (a server's name, an empty result) Errata works out from what the span carries. The
 * fixtures are the smallest traces a differential audit of the reports found wrong.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/server';

const FIXTURES = join(__dirname, 'fixtures/otlp-json');

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('postgres');
  for (const fixture of [
    'servers-known-by-address.json',
    'retry-after-in-payload.json',
    'subagent-no-results-text.json',
  ]) {
    const response = await fetch(`${server.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.ingestKey}` },
      body: readFileSync(join(FIXTURES, fixture)),
    });
    expect(response.status, fixture).toBe(200);
    expect(await response.json(), fixture).toEqual({});
  }
  await server.catchUp();
}, 120_000);
afterAll(() => server?.close());

async function report(path: string, filters: Record<string, string> = {}) {
  const query = new URLSearchParams(filters);
  const response = await fetch(`${server.url}/api/v1/${path}${path.includes('?') ? '&' : '?'}${query}`, {
    headers: { authorization: `Bearer ${server.readKey}` },
  });
  expect(response.status, path).toBe(200);
  return (await response.json()) as ReturnType<typeof JSON.parse>;
}

describe('a server known only by server.address', () => {
  it('is reported by its address, and a call to another address is no retry of it', async () => {
    // A business failure on weather-eu.internal, then a successful call of the same tool on weather-us.internal
    const byServer = await report('reports/retry-waste?groupBy=server', { tool: 'get_weather' });
    expect(byServer.totals).toMatchObject({ calls: 2, retries: 0, wastedRetries: 0 });
    const eu = await report('reports/retry-waste', { server: 'weather-eu.internal' });
    expect(eu.totals).toMatchObject({ calls: 1 });
    const scorecard = await report('servers', { tool: 'get_weather' });
    expect(scorecard.servers.map((s: { server: string }) => s.server)).toEqual([
      'weather-eu.internal',
      'weather-us.internal',
    ]);
  });
});

describe('a retry-after declared in the result, not in errata.error.retry_after_ms', () => {
  it('makes a retry 1 s later, before the 5 s asked for, a wasted ignored_retry_after', async () => {
    const byCategory = await report('reports/retry-waste?groupBy=category', { server: 'kb' });
    expect(byCategory.totals).toMatchObject({ calls: 2, retries: 1, wastedRetries: 1, wastedMs: 100 });
    expect(byCategory.groups).toEqual([
      expect.objectContaining({
        key: 'transient',
        reasons: expect.objectContaining({ ignored_retry_after: 1, recovery: 0 }),
      }),
    ]);
  });
});

describe('a delegate call whose text says "No results found", sent without errata.result.empty', () => {
  it('hides its subagent’s unrecovered timeout: a failure-as-empty, and the escalation after it is attributed', async () => {
    // Trace 1 (the control) flags its empty result; trace 2 says it only in its text
    const misclassified = await report('reports/misclassified-results', { tool: 'delegate_task' });
    expect(misclassified.totals).toMatchObject({ failureAsEmpty: 2 });
    const escalations = await report('reports/escalations');
    expect(escalations.totals).toMatchObject({ escalations: 2, attributed: 2 });
  });
});
