/**
 * ERRATA_RETRY_WINDOW_MS shapes the read models (what is a retry): they record the settings they were derived with,
 * a server started with others rebuilds them, and the CLI derives with the recorded ones, not its own environment's.
 */
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../apps/server/src/config/app-config';
import { startServer } from '../apps/server/src/start-server';
import { ProjectRepository } from '../apps/server/src/repositories/project.repository';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { FixService } from '../apps/server/src/services/fix.service';
import { PROJECTOR_LOCK, ProjectorService } from '../apps/server/src/services/projector.service';
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

describe('fix rounds on a server started with another retry window', () => {
  it('wait from its first round until the rebuild it causes is done, and say so once', async () => {
    // Given a finding of an owned MCP server, projected with a 1 s window, and no fix round run for it yet
    const server = await startTestServer('postgres', {
      ERRATA_RETRY_WINDOW_MS: '1000',
      ERRATA_FIX_INTERVAL_MS: '3600000',
    });
    const lock = new Client({ connectionString: server.databaseUrl! });
    const output = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const logged = () => output.mock.calls.map(([chunk]) => String(chunk));
    let other: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      const project = await server.app.get(ProjectRepository).ensureProject('default');
      const admin = (await server.app.get(ApiKeyService).create(project.id, 'admin', 'cli')).key;
      const registered = await fetch(`${server.url}/api/v1/owners`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ server: 'orders', webhookUrl: 'https://hooks.example.com/errata' }),
      });
      expect(registered.status).toBe(201);
      const agentTrace = new AgentTrace();
      agentTrace.run('support', t0, [
        {
          tool: 'search_orders',
          server: 'orders',
          startMs: t0,
          durationMs: 20,
          isError: true,
          text: 'failed',
        },
      ]);
      expect(await sendSpans(server.url, server.ingestKey, agentTrace.spans())).toBe(200);
      await server.catchUp();
      // The projector lock held, as by a batch of another instance: the new server's projector cannot look yet
      await lock.connect();
      await lock.query('SELECT pg_advisory_lock($1)', [PROJECTOR_LOCK]);

      // When a server starts with a 10-minute window (its first fix round runs at once)
      other = await startServer(
        loadConfig({
          PORT: '0',
          HOST: '127.0.0.1',
          DATABASE_URL: server.databaseUrl!,
          ERRATA_INGEST_KEY: server.ingestKey,
          ERRATA_READ_KEY: server.readKey,
          ERRATA_RETRY_WINDOW_MS: '600000',
          ERRATA_FIX_INTERVAL_MS: '3600000',
          ERRATA_PROJECTION_POLL_MS: '3600000',
        }),
      );
      const fixes = other.get(FixService);
      const projector = other.get(ProjectorService);

      // Then, before its projector has begun the rebuild, the read models count as rebuilding and the rounds wait:
      // they would read read models about to be emptied (and deadlock with their truncation)
      expect(await projector.rebuilding()).toBe(true);
      const otherUrl = `http://127.0.0.1:${(other.getHttpServer().address() as { port: number }).port}`;
      expect(await (await fetch(`${otherUrl}/readyz`)).json()).toMatchObject({ rebuilding: true });
      expect(await fixes.runOnce()).toEqual([]);
      expect(await fixes.list(project.id)).toEqual([]);

      // And once the rebuild is done, the round suggests the fix; the log said the wait once
      await lock.query('SELECT pg_advisory_unlock($1)', [PROJECTOR_LOCK]);
      await projector.settle();
      expect(await projector.rebuilding()).toBe(false);
      expect(await (await fetch(`${otherUrl}/readyz`)).json()).toMatchObject({ rebuilding: false });
      expect((await fixes.runOnce()).map((event) => event.type)).toEqual(['FixSuggested']);
      const lines = logged();
      expect(
        lines.filter((line) => line.includes('ERRATA_RETRY_WINDOW_MS 1000 → 600000: rebuilding')),
      ).toHaveLength(1);
      expect(lines.filter((line) => line.includes('fixes wait for it to finish'))).toHaveLength(1);
    } finally {
      await lock.end();
      await other?.close();
      output.mockRestore();
      await server.close();
    }
  }, 120_000);
});
