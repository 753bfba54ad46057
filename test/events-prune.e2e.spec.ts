/**
 * `errata events prune`: old traces leave the event log whole, and the reports are what the traces left say, as if
 * the deleted ones had never been sent. Real PostgreSQL, the built CLI, and a running Errata beside it.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DATABASE, type Database } from '../apps/server/src/database/database';
import { LogRetentionRepository } from '../apps/server/src/repositories/log-retention.repository';
import { LogRetentionService } from '../apps/server/src/services/log-retention.service';
import { ProjectorService } from '../apps/server/src/services/projector.service';
import { AgentTrace } from './support/agent-spans';
import { runCli } from './support/cli';
import { sendSpans, startTestServer, type TestServer } from './support/server';

let server: TestServer;
beforeAll(async () => {
  // The server projects when ingest wakes it, not on a timer: a rebuild left undone stays undone until a test runs it.
  server = await startTestServer('postgres', { ERRATA_PROJECTION_POLL_MS: '3600000' });
});
afterAll(() => server?.close());

const prune = (...args: string[]) => runCli(server.databaseUrl!, 'events', 'prune', ...args);

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
    'would delete 1 trace (all projects) whose every span started before 2026-06-01T00:00:00.000Z ' +
      '(3 events and span edges); run again with --yes to delete them\n',
  );
  expect(await count('event')).toBe(events);

  // When told to, it deletes that trace whole, with its request records, and rebuilds the read models
  const pruned = await prune('--before', '2026-06-01', '--yes');
  expect(pruned.code).toBe(0);
  expect(pruned.stderr).toMatch(/deleting traces \[#+\] 100% 1\/1/);
  expect(pruned.stdout).toMatch(
    /^deleted 1 trace \(all projects\) whose every span started before 2026-06-01T00:00:00\.000Z \(3 events, 0 span edges\) and 1 record of OTLP requests received before then\nrebuilt read models and rollups from \d+ events and span edges/,
  );
  expect(await count('event')).toBe(events - 3);
  expect(await count("ingest_batch WHERE received_at < '2026-06-01'")).toBe(0);
  // Then the reports hold the two traces left, the long-running one whole
  await server.catchUp();
  expect(await allTimeCalls()).toBe(3);

  // And a second run finds nothing more to delete
  expect((await prune('--before', '2026-06-01', '--yes')).stdout).toBe(
    'nothing to delete: no trace (all projects) has every span starting before 2026-06-01T00:00:00.000Z\n',
  );
});

function retention(): LogRetentionService {
  const database = server.app.get<Database>(DATABASE);
  return new LogRetentionService(
    database,
    new LogRetentionRepository(database),
    server.app.get(ProjectorService),
  );
}

it('keeps a listed trace that got a span after the date meanwhile, and its span', async () => {
  // Given a trace of February, listed for deletion
  const february = Date.UTC(2026, 1, 5, 10);
  const spans = new AgentTrace().run('february', february, [
    { tool: 'lookup', startMs: february + 1, durationMs: 5 },
  ]);
  expect(await sendSpans(server.url, server.ingestKey, spans)).toBe(200);
  const traceId = spans[0]!.spanContext().traceId;
  const listed = (await retention().endedBefore(new Date('2026-06-01'), null)).filter(
    (t) => t.traceId === traceId,
  );
  expect(listed).toHaveLength(1);
  // When a span of it that started after the date arrives before the deletion
  const late = new AgentTrace().run('february', Date.now() - 1_000, [
    { tool: 'lookup', startMs: Date.now() - 999, durationMs: 5 },
  ]);
  const lateInTrace = late.map((span) =>
    Object.assign(Object.create(Object.getPrototypeOf(span)), span, {
      spanContext: () => ({ ...span.spanContext(), traceId }),
    }),
  );
  expect(await sendSpans(server.url, server.ingestKey, lateInTrace)).toBe(200);
  const before = await count(`event WHERE trace_id = decode('${traceId}', 'hex')`);
  const pruned = await retention().prune(listed, new Date('2026-06-01'), null, () => undefined);
  // Then nothing of it is deleted: the trace goes on after the date
  expect(pruned).toMatchObject({ events: 0, edges: 0 });
  expect(await count(`event WHERE trace_id = decode('${traceId}', 'hex')`)).toBe(before);
  await server.catchUp();
});

it('deletes nothing when a newer Errata projects the database, and says why', async () => {
  const april = Date.UTC(2026, 3, 5, 10);
  const spans = new AgentTrace().run('april', april, [{ tool: 'lookup', startMs: april + 1, durationMs: 5 }]);
  expect(await sendSpans(server.url, server.ingestKey, spans)).toBe(200);
  await server.catchUp();
  const events = await count('event');
  await sql`UPDATE projection_checkpoint SET version = version + 1`.execute(server.db);
  try {
    // It says so in one line, before it looks or deletes (a look without --yes too)
    for (const asked of [['--yes'], []]) {
      const refused = await prune('--before', '2026-06-01', ...asked);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        /^errata: the read models are at rules version \d+, newer than this Errata's/,
      );
      expect(refused.stderr).not.toMatch(/deleting traces/);
      expect(refused.stdout).toBe('');
    }
    expect(await count('event')).toBe(events);
  } finally {
    await sql`UPDATE projection_checkpoint SET version = version - 1`.execute(server.db);
  }
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

it('finishes, on its next run, a rebuild an earlier run was cut off in', async () => {
  // Given no server projecting beside the CLI (it would finish the rebuild itself), and a prune whose deletion
  // committed, and whose rebuild nobody ran (the process was stopped)
  await server.app.get(ProjectorService).beforeApplicationShutdown();
  const march = Date.UTC(2026, 2, 5, 10);
  const spans = new AgentTrace().run('march', march, [{ tool: 'lookup', startMs: march + 1, durationMs: 5 }]);
  expect(await sendSpans(server.url, server.ingestKey, spans)).toBe(200);
  await server.catchUp();
  const service = retention();
  await service.prune(
    await service.endedBefore(new Date('2026-06-01'), null),
    new Date('2026-06-01'),
    null,
    () => undefined,
  );
  expect(await server.app.get(ProjectorService).rebuilding()).toBe(true);
  // A look without --yes changes nothing, that rebuild included
  const look = await prune('--before', '2026-06-01');
  expect(look.stdout).not.toMatch(/rebuilt/);
  expect(await server.app.get(ProjectorService).rebuilding()).toBe(true);
  // When prune runs again, with nothing left to delete, it rebuilds
  const again = await prune('--before', '2026-06-01', '--yes');
  expect(again.code).toBe(0);
  expect(again.stdout).toMatch(
    /nothing to delete: .*\nrebuilt read models and rollups from \d+ events and span edges\n$/,
  );
  // (what the projector logs meanwhile goes to stderr: stdout is the command's own)
  expect(again.stderr).toMatch(/going on with a rebuild begun earlier/);
  expect(await server.app.get(ProjectorService).rebuilding()).toBe(false);
  // and the reports count the calls the log holds, no deleted one
  expect(await allTimeCalls()).toBe(await count("event WHERE type = 'ToolCallObserved'"));
});
