/**
 * Moving Errata's database to another PostgreSQL server with pg_dump and pg_restore (a new machine, a major-version
 * upgrade by dump and restore): the log keeps the transaction ids the first server assigned, which may lie far above
 * the second one's. The first server is a throwaway cluster whose ids begin at 7 × 2³² (pg_resetwal -e), so the
 * test server is always the lower one; real dumps, real restores, the real server on both sides.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { Client } from 'pg';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { ProjectorService } from '../apps/server/src/services/projector.service';
import { AgentTrace } from './support/agent-spans';
import { runCli, type CliRun } from './support/cli';
import {
  adminDatabaseUrl,
  createTestDatabase,
  databaseUrlFor,
  startThrowawayCluster,
  withLogHorizonHeld,
  type ThrowawayCluster,
} from './support/postgres';
import { sendSpans, startTestServerOn, type TestServer } from './support/server';
import { until } from './support/until';

const execFileAsync = promisify(execFile);

let cluster: ThrowawayCluster | undefined;
let dumpDir: string;
let restored: TestServer | undefined;
const restoredDatabase = `errata_test_restored_${process.pid}`;

async function onAdmin(statement: string, databaseUrl = adminDatabaseUrl()): Promise<void> {
  const admin = new Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}

beforeAll(async () => {
  cluster = await startThrowawayCluster(7);
  dumpDir = await mkdtemp(join(tmpdir(), 'errata-dump-'));
});

afterAll(async () => {
  await restored?.close();
  await cluster?.stop();
  await onAdmin(`DROP DATABASE IF EXISTS ${restoredDatabase} WITH (FORCE)`);
  await rm(dumpDir, { recursive: true, force: true });
});

async function report(server: TestServer): Promise<{ totals: { calls: number }; groups: unknown[] }> {
  const response = await fetch(`${server.url}/api/v1/reports/retry-waste?from=2020-01-01&to=2030-01-01`, {
    headers: { authorization: `Bearer ${server.readKey}` },
  });
  return (await response.json()) as { totals: { calls: number }; groups: unknown[] };
}

async function setAsideRecords(server: TestServer): Promise<number> {
  const response = await fetch(`${server.url}/readyz`);
  return ((await response.json()) as { setAsideRecords: number }).setAsideRecords;
}

const call = (tool: string, startMs: number, isError = false) => ({ tool, startMs, durationMs: 5, isError });

it('given a dump of a server whose transaction ids lie above this one, then nothing is lost, nothing counted twice', async () => {
  const now = Date.now() - 60_000;
  // Given Errata on the first server: projected traces (one with its calls under a model step, a span edge), a record
  // set aside, and a trace committed but not projected yet when the dump is taken
  await onAdmin('CREATE DATABASE errata', cluster!.urlFor('postgres'));
  const first = await startTestServerOn(cluster!.urlFor('errata'));
  expect(
    await sendSpans(
      first.url,
      first.ingestKey,
      new AgentTrace().run('a', now, [call('search', now + 1, true), call('search', now + 2)]),
    ),
  ).toBe(200);
  expect(
    await sendSpans(
      first.url,
      first.ingestKey,
      new AgentTrace().runInStep('b', now, [call('fetch', now + 3)]),
    ),
  ).toBe(200);
  await first.catchUp();
  await sql`
    INSERT INTO projection_skip (projection, transaction_id, global_position, project_id, error)
    SELECT 'read-models', transaction_id, global_position, project_id, 'TypeError: set aside before the move'
      FROM event ORDER BY global_position LIMIT 1`.execute(first.db);
  await withLogHorizonHeld(first.databaseUrl!, async () => {
    expect(
      await sendSpans(first.url, first.ingestKey, new AgentTrace().run('c', now, [call('lookup', now + 4)])),
    ).toBe(200);
    await first.close();
  });
  const dump = join(dumpDir, 'errata.dump');
  await execFileAsync(cluster!.bin('pg_dump'), ['-Fc', '-f', dump, cluster!.urlFor('errata')]);

  // When it is restored into a database of the test server, and Errata starts on it and takes more spans
  await onAdmin(`CREATE DATABASE ${restoredDatabase}`);
  await execFileAsync(cluster!.bin('pg_restore'), [
    '--no-owner',
    '-d',
    databaseUrlFor(restoredDatabase),
    dump,
  ]);
  restored = await startTestServerOn(databaseUrlFor(restoredDatabase));
  expect(
    await sendSpans(
      restored.url,
      restored.ingestKey,
      new AgentTrace().run('d', now, [call('lookup', now + 5)]),
    ),
  ).toBe(200);
  await restored.catchUp();

  // Then the reports hold every call once: those projected before the move, the one not projected then, the new one
  const before = await report(restored);
  expect(before.totals.calls).toBe(5);
  expect(await setAsideRecords(restored)).toBe(1);
  // and no position lies beyond this server's transactions any more, checkpoints included
  const { rows } = await sql<{ beyond: number }>`
    SELECT (SELECT count(*) FROM event WHERE transaction_id >= pg_snapshot_xmax(pg_current_snapshot()))
         + (SELECT count(*) FROM span_edge WHERE transaction_id >= pg_snapshot_xmax(pg_current_snapshot()))
         + (SELECT count(*) FROM projection_checkpoint WHERE transaction_id >= pg_snapshot_xmax(pg_current_snapshot()))
         + (SELECT count(*) FROM projection_skip WHERE transaction_id >= pg_snapshot_xmax(pg_current_snapshot()))
           AS beyond`.execute(restored.db);
  expect(Number(rows[0]!.beyond)).toBe(0);
  // and a rebuild from the log says the same
  await restored.app.get(ProjectorService).rebuild();
  expect(await report(restored)).toEqual(before);
});

/**
 * What a restore leaves, made in place: every stored position moved up by 7 × 2³², as if another server had assigned
 * it (each table's rows and the checkpoints keep their order, as in a dump).
 */
async function asIfRestoredFromAbove(server: TestServer): Promise<void> {
  const above = sql`(transaction_id::text::numeric + 30064771072)::text::xid8`;
  for (const table of ['event', 'span_edge', 'projection_checkpoint', 'projection_skip'])
    await sql`UPDATE ${sql.table(table)} SET transaction_id = ${above} WHERE transaction_id <> '0'`.execute(
      server.db,
    );
}

it.each([
  ['went on projecting it', false],
  ['rebuilt its read models', true],
])(
  'given an Errata without the renumbering that took spans on the restored log and %s, then the next start projects every call once',
  async (_, rebuilt) => {
    const now = Date.now() - 60_000;
    const database = await createTestDatabase(inject('templateDatabase'));
    const before = await startTestServerOn(database.url);
    try {
      expect(
        await sendSpans(
          before.url,
          before.ingestKey,
          new AgentTrace().run('a', now, [call('search', now + 1)]),
        ),
      ).toBe(200);
      expect(
        await sendSpans(
          before.url,
          before.ingestKey,
          new AgentTrace().runInStep('b', now, [call('fetch', now + 2)]),
        ),
      ).toBe(200);
      await before.catchUp();
      // Given the log restored from above, and a call taken since by a server that did not renumber it: numbered
      // below the checkpoint, it never reaches the reports
      await asIfRestoredFromAbove(before);
      expect(
        await sendSpans(
          before.url,
          before.ingestKey,
          new AgentTrace().run('c', now, [call('lookup', now + 3)]),
        ),
      ).toBe(200);
      const projector = before.app.get(ProjectorService);
      if (rebuilt) await projector.beginRebuild();
      // (what it projects, once another session of the server no longer holds the log's horizon back)
      const frozen = rebuilt ? 1 : 2;
      await until(`${frozen} calls in the reports`, async () => {
        await projector.catchUp();
        return (await report(before)).totals.calls === frozen;
      });
      await before.close();

      // When this Errata starts on it
      const after = await startTestServerOn(before.databaseUrl);
      try {
        await after.catchUp();
        // Then every call is in the reports, once
        expect((await report(after)).totals.calls).toBe(3);
      } finally {
        await after.close();
      }
    } finally {
      await before.close().catch(() => undefined); // (closed already, unless the test failed before)
      await database.drop();
    }
  },
);

it('given two Errata starting at once on a restored log, then one renumbers it and says so, the other finds it done', async () => {
  const now = Date.now() - 60_000;
  const database = await createTestDatabase(inject('templateDatabase'));
  const server = await startTestServerOn(database.url);
  try {
    expect(
      await sendSpans(
        server.url,
        server.ingestKey,
        new AgentTrace().run('a', now, [call('search', now + 1)]),
      ),
    ).toBe(200);
    await server.catchUp();
    await asIfRestoredFromAbove(server);
    await server.close();
    // Given both past their first look, waiting for the log (a session of ours holds it meanwhile)
    const holder = new Client({ connectionString: server.databaseUrl! });
    await holder.connect();
    let runs: Promise<CliRun>[];
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE event IN SHARE ROW EXCLUSIVE MODE');
      runs = [runCli(server.databaseUrl!, 'migrate'), runCli(server.databaseUrl!, 'migrate')];
      await until('both waiting for the log', async () => {
        const { rows } = await holder.query<{ waiting: number }>(
          "SELECT count(*)::int AS waiting FROM pg_locks WHERE relation = 'event'::regclass AND NOT granted",
        );
        return rows[0]!.waiting === 2;
      });
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    // When they go on, then one renumbered the log and says so; the other says nothing of it
    const said = (await Promise.all(runs)).map((run) => {
      expect(run.code, run.stderr).toBe(0);
      return run.stderr.match(/renumbered \d+ events/)?.[0] ?? null;
    });
    expect(said.sort()).toEqual([null, 'renumbered 2 events']);
  } finally {
    await server.close().catch(() => undefined); // (closed already, unless the test failed before)
    await database.drop();
  }
});
