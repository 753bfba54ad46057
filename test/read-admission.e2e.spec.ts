import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Logger } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { Client } from 'pg';
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import type { DB } from '../apps/server/src/database/schema';
import { RollupQueryRepository } from '../apps/server/src/repositories/rollup-query.repository';
import { AgentReportsService } from '../apps/server/src/services/agent-reports.service';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { FindingsService } from '../apps/server/src/services/findings.service';
import { ReadAdmission } from '../apps/server/src/services/read-admission';
import { connectErrataMcp, defaultProjectId, startTestServer, type TestServer } from './support/server';
import { until } from './support/until';

let server: TestServer;
let admission: ReadAdmission;

beforeAll(async () => {
  server = await startTestServer('postgres', { ERRATA_MAX_CONCURRENT_READS: '1' });
  admission = server.app.get(ReadAdmission);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

afterEach(() => {
  vi.restoreAllMocks();
});

const read = (path: string, signal?: AbortSignal) =>
  fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${server.readKey}` }, signal });

/**
 * Takes the only place with a report that waits on a lock held on the rollup it sums: in flight for as long as the
 * test says, not for as long as a slow query happens to take. `release` lets it finish and closes the session.
 */
async function holdThePlace(): Promise<{ first: Promise<Response>; release(): Promise<void> }> {
  const locker = new Client({ connectionString: server.databaseUrl!, options: '-c statement_timeout=0' });
  await locker.connect();
  const release = async () => {
    await locker.query('COMMIT').catch(() => undefined);
    await locker.end();
  };
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE call_rollup IN ACCESS EXCLUSIVE MODE');
    const first = read('/api/v1/reports/retry-waste?groupBy=tool');
    await until('the first report to wait on the lock', async () => {
      const { rows } = await locker.query<{ waiting: string }>(
        `SELECT count(*)::text AS waiting FROM pg_locks WHERE NOT granted AND relation = 'call_rollup'::regclass`,
      );
      return admission.readsAdmitted === 1 && rows[0]!.waiting !== '0';
    });
    return { first, release };
  } catch (error) {
    await release();
    throw error;
  }
}

it('with ERRATA_MAX_CONCURRENT_READS=1, a read waits while the first is answered, four may wait, the next is refused 503 + Retry-After at once; all are answered once the first is', async () => {
  const { first, release } = await holdThePlace();
  const queued: Promise<Response>[] = [];
  try {
    // Four reads wait for its place (a dashboard asks for several at once), holding no connection.
    for (const path of [
      '/api/v1/servers',
      '/api/v1/findings',
      '/api/v1/reports/escalations',
      '/api/v1/names',
    ])
      queued.push(read(path));
    await until('four reads waiting', () => admission.readsWaiting === 4);
    for (const path of [
      '/api/v1/reports/retry-waste',
      '/api/v1/reports/misclassified-results',
      '/api/v1/names',
    ]) {
      const refused = await read(path);
      expect(refused.status, path).toBe(503);
      expect(refused.headers.get('retry-after'), path).toBe('1');
      expect(await refused.json(), path).toMatchObject({
        statusCode: 503,
        message: expect.stringContaining('ERRATA_MAX_CONCURRENT_READS'),
      });
    }
    expect(admission.readsAdmitted).toBe(1);
    // Health does not take a read's place.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  } finally {
    await release();
  }
  expect((await first).status).toBe(200);
  expect((await Promise.all(queued)).map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
  expect(admission.readsAdmitted).toBe(0);
  expect(admission.readsWaiting).toBe(0);
  // Places are given back after a refused parameter too.
  expect((await read('/api/v1/reports/retry-waste?groupBy=nope')).status).toBe(400);
  expect((await read('/api/v1/reports/retry-waste?groupBy=nope')).status).toBe(400);
  expect((await read('/api/v1/servers')).status).toBe(200);
  expect(admission.readsAdmitted).toBe(0);
}, 60_000);

it('a read whose client disconnects while it waits leaves the queue: the next client gets its slot, and its query never runs', async () => {
  const coverage = vi.spyOn(server.app.get(AgentReportsService), 'subagentCoverage');
  const { first, release } = await holdThePlace();
  const queued: Promise<Response>[] = [];
  try {
    const client = new AbortController();
    const abandoned = read('/api/v1/reports/subagent-coverage', client.signal).catch((error: Error) => error);
    await until('the read to wait for the place', () => admission.readsWaiting === 1);
    client.abort();
    expect(await abandoned).toMatchObject({ name: 'AbortError' });
    await until('the abandoned read to leave the queue', () => admission.readsWaiting === 0);
    // The whole queue is there for the clients still waiting: four wait, the fifth is refused.
    for (const path of ['/api/v1/servers', '/api/v1/findings', '/api/v1/servers', '/api/v1/findings'])
      queued.push(read(path));
    await until('four reads waiting', () => admission.readsWaiting === 4);
    expect((await read('/api/v1/servers')).status).toBe(503);
  } finally {
    await release();
  }
  expect((await first).status).toBe(200);
  expect((await Promise.all(queued)).map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
  expect(admission.readsAdmitted).toBe(0);
  // Every place has been given back, so every read admitted has run: the abandoned one never was.
  expect(coverage).not.toHaveBeenCalled();
}, 60_000);

it("Errata's MCP read tools take the same places: a call waits in the queue, past it is refused as a retryable transient tool error, and one whose client goes away leaves the queue", async () => {
  const coverage = vi.spyOn(server.app.get(AgentReportsService), 'subagentCoverage');
  const mcp = await connectErrataMcp(server.url, server.readKey);
  const leaving = await connectErrataMcp(server.url, server.readKey, 'errata-e2e-leaving');
  const { first, release } = await holdThePlace();
  let waiting: Promise<CallToolResult> | null = null;
  const queued: Promise<Response>[] = [];
  try {
    // Over MCP too, a report waits for a place, holding no connection (before, it ran at once, past the bound).
    waiting = mcp.callTool({ name: 'get_escalation_rates', arguments: {} }) as Promise<CallToolResult>;
    await until('the MCP call to wait for a place', () => admission.readsWaiting === 1);
    // An MCP client that goes away while its call waits gives up its slot, and the call never runs.
    const abandoned = leaving
      .callTool({ name: 'get_subagent_coverage', arguments: {} })
      .catch((error: Error) => error);
    await until('the second MCP call to wait', () => admission.readsWaiting === 2);
    await leaving.close();
    await abandoned;
    await until('the abandoned MCP call to leave the queue', () => admission.readsWaiting === 1);
    for (const path of ['/api/v1/servers', '/api/v1/findings', '/api/v1/servers']) queued.push(read(path));
    await until('the queue full', () => admission.readsWaiting === 4);
    // Past the queue: a valid call that fails for now, answered as a tool result the model sees, not a JSON-RPC
    // error, in Errata's envelope, mirrored in text, with how long to wait.
    const refused = (await mcp.callTool({ name: 'list_findings', arguments: {} })) as CallToolResult;
    const envelope = {
      ok: false,
      data: null,
      error: {
        errorCategory: 'transient',
        isRetryable: true,
        code: 'ERRATA_BUSY',
        description: expect.stringMatching(
          /The request is valid; retry it unchanged after 1 second\.$/,
        ) as string,
        retryAfterMs: 1000,
      },
    };
    expect(refused).toEqual({
      isError: true,
      content: [{ type: 'text', text: JSON.stringify(refused.structuredContent) }],
      structuredContent: envelope,
    });
    expect(admission.readsAdmitted).toBe(1);
  } finally {
    await release();
  }
  expect((await first).status).toBe(200);
  expect((await Promise.all(queued)).map((answer) => answer.status)).toEqual([200, 200, 200]);
  const answered = await waiting!;
  expect(answered.isError).toBeUndefined();
  expect(answered.structuredContent).toMatchObject({ ok: true, error: null });
  expect(admission.readsAdmitted).toBe(0);
  expect(admission.readsWaiting).toBe(0);
  expect(coverage).not.toHaveBeenCalled();
  // The tools that read still answer once places are free, and give theirs back.
  expect((await mcp.callTool({ name: 'get_subagent_coverage', arguments: {} })).isError).toBeUndefined();
  expect(coverage).toHaveBeenCalledOnce();
  expect(admission.readsAdmitted).toBe(0);
  await mcp.close();
}, 60_000);

it('acknowledging a fix takes a place too, over MCP and REST (an id with no fix is looked up in the findings of all time); a read key is refused without one', async () => {
  const exists = vi.spyOn(server.app.get(FindingsService), 'exists');
  const { key } = await server.app
    .get(ApiKeyService)
    .create(await defaultProjectId(server.db), 'admin', 'cli');
  const admin = await connectErrataMcp(server.url, key);
  const reader = await connectErrataMcp(server.url, server.readKey);
  const unknownId = 'ffffffffffffffffffff';
  const { first, release } = await holdThePlace();
  let overMcp: Promise<CallToolResult> | null = null;
  let overRest: Promise<Response> | null = null;
  try {
    // Refused for its key at once, whatever the places: it would not have run a query.
    const notAdmin = (await reader.callTool({
      name: 'acknowledge_fix',
      arguments: { findingId: unknownId },
    })) as CallToolResult;
    expect(notAdmin.structuredContent).toMatchObject({ ok: false, error: { code: 'ADMIN_KEY_REQUIRED' } });
    expect(admission.readsWaiting).toBe(0);
    overMcp = admin.callTool({
      name: 'acknowledge_fix',
      arguments: { findingId: unknownId },
    }) as Promise<CallToolResult>;
    await until('the MCP acknowledgement to wait for a place', () => admission.readsWaiting === 1);
    overRest = fetch(`${server.url}/api/v1/findings/${unknownId}/acknowledge`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
    });
    await until('the REST acknowledgement to wait for a place', () => admission.readsWaiting === 2);
    expect(exists).not.toHaveBeenCalled();
  } finally {
    await release();
  }
  expect((await first).status).toBe(200);
  expect((await overMcp!).structuredContent).toMatchObject({
    ok: false,
    error: { code: 'FINDING_NOT_FOUND' },
  });
  expect((await overRest!).status).toBe(404);
  expect(exists).toHaveBeenCalledTimes(2);
  expect(admission.readsAdmitted).toBe(0);
  await admin.close();
  await reader.close();
}, 60_000);

/**
 * Makes the subagent-coverage report's read of the call sums sleep 30 s first, on its snapshot's connection: an
 * admitted read in flight for as long as the test says. Gives back the hook's removal.
 */
function sleepInSnapshot(): () => void {
  const repository = server.app.get(RollupQueryRepository) as unknown as Record<string, unknown>;
  const original = repository.callSums as (...args: unknown[]) => Promise<unknown>;
  // An own property of the repository, so the snapshot's reads (whose prototype it is) meet it too.
  repository.callSums = async function (this: { db: Kysely<DB> }, ...args: unknown[]) {
    await sql`SELECT pg_sleep(30) /* abandoned read */`.execute(this.db);
    return original.apply(this, args);
  };
  return () => delete repository.callSums;
}

/** Starts a read whose client can go away: a REST report's fetch, or an MCP client's call of the same report. */
const ABANDONABLE_READS: Record<string, () => Promise<{ leave(): Promise<void> }>> = {
  async 'a REST report'() {
    const client = new AbortController();
    const abandoned = read('/api/v1/reports/subagent-coverage', client.signal).catch((error: Error) => error);
    return {
      async leave() {
        client.abort();
        expect(await abandoned).toMatchObject({ name: 'AbortError' });
      },
    };
  },
  async 'an MCP read tool'() {
    const mcp = await connectErrataMcp(server.url, server.readKey, 'errata-e2e-leaving');
    const abandoned = mcp
      .callTool({ name: 'get_subagent_coverage', arguments: {} })
      .catch((error: Error) => error);
    return {
      async leave() {
        await mcp.close();
        await abandoned;
      },
    };
  },
};

it.each(Object.keys(ABANDONABLE_READS))(
  '%s admitted, whose client disconnects, stops: its statement is canceled on PostgreSQL, its place and connection freed, nothing logged',
  async (caller) => {
    const logged: string[] = [];
    const log = (message: unknown) => void logged.push(String(message));
    Logger.overrideLogger({ log() {}, warn: log, error: log, debug() {}, verbose() {}, fatal() {} });
    const observer = new Client({ connectionString: server.databaseUrl! });
    await observer.connect();
    const restore = sleepInSnapshot();
    const sleeping = async () => {
      const { rows } = await observer.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'active'
         AND query LIKE '%pg_sleep(30) /* abandoned read */%' AND pid <> pg_backend_pid()`,
      );
      return rows;
    };
    try {
      const abandoned = await ABANDONABLE_READS[caller]!();
      const [sleeper] = await until('the read to sleep on PostgreSQL', async () => {
        const rows = await sleeping();
        return rows.length === 1 && rows;
      });
      expect(admission.readsAdmitted).toBe(1);
      await abandoned.leave();
      // Canceled on PostgreSQL at once, not run for its 30 s (or until ERRATA_PG_QUERY_TIMEOUT_MS) …
      await until('the statement to be canceled', async () => (await sleeping()).length === 0, 5_000);
      await until('the place to be given back', () => admission.readsAdmitted === 0, 5_000);
      restore();
      // … so that the only place goes to the next read, answered on a sound connection.
      const next = await read('/api/v1/reports/subagent-coverage');
      expect(next.status).toBe(200);
      // The connection was kept, its transaction rolled back: not closed, not left in the canceled transaction.
      const { rows } = await observer.query<{ state: string | null }>(
        'SELECT state FROM pg_stat_activity WHERE pid = $1',
        [sleeper!.pid],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]!.state).not.toMatch(/aborted/);
    } finally {
      restore();
      await observer.end();
      Logger.overrideLogger(['warn', 'error']);
    }
    // A client going away is no failure of Errata's or the database's: no 500, no "database unavailable".
    expect(logged).toEqual([]);
  },
  30_000,
);
