/**
 * ERRATA_RETRY_WINDOW_MS shapes the read models (what is a retry): they record the settings they were derived with,
 * a server started with others rebuilds them, and the CLI derives with the recorded ones, not its own environment's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../apps/server/src/config/app-config';
import { startServer } from '../apps/server/src/main';
import { AgentTrace } from './support/agent-spans';
import { runCliWithEnv } from './support/cli';
import { sendSpans, startTestServer, type TestServer } from './support/server';
import { until } from './support/until';

const t0 = Date.UTC(2026, 10, 30, 8, 0, 0);

describe('the retry window the read models were derived with', () => {
  let server: TestServer;
  beforeAll(async () => {
    // Given a server whose retry window (1 s) is shorter than the 5 s between a failure and its repeat
    server = await startTestServer('postgres', { ERRATA_RETRY_WINDOW_MS: '1000' });
    const agentTrace = new AgentTrace();
    agentTrace.run('support', t0, [
      { tool: 'refund', startMs: t0, durationMs: 20, isError: true, category: 'business' },
      { tool: 'refund', startMs: t0 + 5_000, durationMs: 20, isError: true, category: 'business' },
    ]);
    expect(await sendSpans(server.url, server.ingestKey, agentTrace.spans())).toBe(200);
    await server.catchUp();
  }, 120_000);
  afterAll(() => server?.close());

  const retries = async (url = server.url) => {
    const response = await fetch(`${url}/api/v1/reports/retry-waste`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    return ((await response.json()) as { totals: { retries: number } }).totals.retries;
  };
  const rebuild = (env: Record<string, string> = {}) =>
    runCliWithEnv({ DATABASE_URL: server.databaseUrl!, ...env }, 'projections', 'rebuild');

  it("given a CLI rebuild with only DATABASE_URL set (a cron job), then it derives with the server's window", async () => {
    expect(await retries()).toBe(0);
    const run = await rebuild();
    expect(run.code, run.stderr).toBe(0);
    expect(await retries()).toBe(0);
  });

  it('given a CLI whose own window differs, then it says so and still derives with the recorded one', async () => {
    const run = await rebuild({ ERRATA_RETRY_WINDOW_MS: '600000' });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      'ERRATA_RETRY_WINDOW_MS=600000 is not used: the read models were derived with 1000',
    );
    expect(await retries()).toBe(0);
  });

  it('given a server started with another window, then it rebuilds the read models with its own', async () => {
    const other = await startServer(
      loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: server.databaseUrl!,
        ERRATA_INGEST_KEY: server.ingestKey,
        ERRATA_READ_KEY: server.readKey,
        ERRATA_RETRY_WINDOW_MS: '600000',
      }),
      ['warn', 'error'],
    );
    try {
      const url = `http://127.0.0.1:${(other.getHttpServer().address() as { port: number }).port}`;
      // The 5 s repeat is a retry under a 10-minute window, in the reports as in the run timeline.
      await until('the rebuild with the 10-minute window', async () => (await retries(url)) === 1, 30_000);
      // The first server, started before with its 1 s window, leaves projecting to it rather than mix both windows.
      expect(await server.catchUp()).toBe(0);
      const run = await rebuild();
      expect(run.code, run.stderr).toBe(0);
      expect(await retries(url)).toBe(1);
      expect(await retries(server.url)).toBe(1);
    } finally {
      await other.close();
    }
  });
});
