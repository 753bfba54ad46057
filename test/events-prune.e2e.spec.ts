/**
 * `errata events prune`: old traces leave the event log whole, and the reports are what the traces left say, as if
 * the deleted ones had never been sent. Real PostgreSQL, the built CLI, and a running Errata beside it.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AgentTrace } from './support/agent-spans';
import { sendSpans, startTestServer, type TestServer } from './support/server';

const CLI = join(__dirname, '../apps/server/dist/cli/errata.js');
const run = promisify(execFile);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('postgres');
});
afterAll(() => server?.close());

function prune(...args: string[]) {
  return run(process.execPath, [CLI, 'events', 'prune', ...args], {
    env: { ...process.env, DATABASE_URL: server.databaseUrl! },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );
}

async function count(table: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.raw(table)}`.execute(
    server.db,
  );
  return rows[0]!.n;
}

async function allTimeCalls(): Promise<number> {
  const response = await fetch(`${server.url}/api/v1/reports/retry-waste?from=2020-01-01&to=2030-01-01`, {
    headers: { authorization: `Bearer ${server.readKey}` },
  });
  return ((await response.json()) as { totals: { calls: number } }).totals.calls;
}

it('deletes the traces whose every span started before the date, says so first without --yes, and rebuilds', async () => {
  // Given a trace of January, one of now, and one that began in January and went on until now
  const january = Date.UTC(2026, 0, 5, 10);
  const now = Date.now() - 60_000;
  const lookup = (startMs: number) => ({ tool: 'lookup', startMs, durationMs: 5 });
  for (const spans of [
    new AgentTrace().run('january', january, [lookup(january + 1), lookup(january + 10)]),
    new AgentTrace().run('recent', now, [lookup(now + 1)]),
    new AgentTrace().run('long-running', january, [lookup(january + 1), lookup(now)]),
  ])
    expect(await sendSpans(server.url, server.ingestKey, spans)).toBe(200);
  await server.catchUp();
  expect(await allTimeCalls()).toBe(5);
  const events = await count('event');
  // and a record of an OTLP request from back then
  await sql`
    INSERT INTO ingest_batch (project_id, received_at, spans_received, events_appended, spans_dropped, spans_rejected)
    SELECT project_id, '2026-01-05T10:00:00Z', 3, 3, 0, 0 FROM ingest_batch LIMIT 1`.execute(server.db);

  // When asked without --yes, it says what would go, and deletes nothing
  const asked = await prune('--before', '2026-06-01');
  expect(asked.code).toBe(0);
  expect(asked.stdout).toBe(
    'would delete 1 trace of every project whose every span started before 2026-06-01T00:00:00.000Z ' +
      '(3 events and span edges); run again with --yes to delete them\n',
  );
  expect(await count('event')).toBe(events);

  // When told to, it deletes that trace whole, with its request records, and rebuilds the read models
  const pruned = await prune('--before', '2026-06-01', '--yes');
  expect(pruned.code).toBe(0);
  expect(pruned.stderr).toMatch(/deleting traces \[#+\] 100% 1\/1/);
  expect(pruned.stdout).toMatch(
    /^deleted 1 trace of every project whose every span started before 2026-06-01T00:00:00\.000Z \(3 events, 0 span edges\) and 1 record of OTLP requests received before then\nrebuilt read models and rollups from \d+ events and span edges/,
  );
  expect(await count('event')).toBe(events - 3);
  expect(await count("ingest_batch WHERE received_at < '2026-06-01'")).toBe(0);
  // Then the reports hold the two traces left, the long-running one whole
  await server.catchUp();
  expect(await allTimeCalls()).toBe(3);

  // And a second run finds nothing more to delete
  expect((await prune('--before', '2026-06-01', '--yes')).stdout).toBe(
    'no traces of every project ended before 2026-06-01T00:00:00.000Z: nothing to delete\n',
  );
});

it('refuses a date it cannot read, and a project that does not exist', async () => {
  const missing = await prune();
  expect(missing.code).toBe(2);
  expect(missing.stderr).toBe('errata: missing --before <date>\n');
  const bad = await prune('--before', '2026-02-30');
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/^errata: --before must be an ISO-8601 date or date-time/);
  const nobody = await prune('--before', '2026-06-01', '--project', 'nobody');
  expect(nobody.code).toBe(2);
  expect(nobody.stderr).toMatch(/^errata: project "nobody" does not exist/);
});
