/**
 * What a fix round costs: its reads are made per project, not per owned finding. A round that read each finding's
 * fix, traffic, history and deliveries took over 15 minutes for 8,000 findings of owned servers, and the next one
 * began at once.
 */
import { CompiledQuery, sql } from 'kysely';
import { Client } from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DeliveryRepository } from '../apps/server/src/repositories/delivery.repository';
import { FIX_ROUND_LOCK } from '../apps/server/src/repositories/fix.repository';
import { OwnerRepository } from '../apps/server/src/repositories/owner.repository';
import { FixService } from '../apps/server/src/services/fix.service';
import { AgentTrace } from './support/agent-spans';
import { defaultProjectId, sendSpans, startTestServer, type TestServer } from './support/server';
import { statementsOf, type Statement } from './support/statements';
import { until } from './support/until';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer('postgres', {
    ERRATA_FIX_INTERVAL_MS: '3600000', // rounds are run by the test
    ERRATA_DELIVERY_POLL_MS: '3600000', // nothing is delivered: an enqueued message counts as sent
    ERRATA_PROJECTION_POLL_MS: '3600000', // projecting is `catchUp`, but for ingest's wake-ups
    ERRATA_FIX_MIN_CALLS: '5',
  });
}, 60_000);
afterAll(() => server?.close());

/** One failing call (a bare message: an untyped error) of each of `tools` tools of `serverName`, projected. */
async function failingTools(serverName: string, tools: number, first = 0): Promise<void> {
  const at = Date.now() - 60_000;
  const calls = Array.from({ length: tools }, (_, i) => ({
    tool: `tool_${first + i}`,
    server: serverName,
    startMs: at + i,
    durationMs: 1,
    isError: true,
    text: 'upstream request failed',
    extra: { 'errata.server.version': '1.0.0' },
  }));
  expect(await sendSpans(server.url, server.ingestKey, new AgentTrace().run('agent', at, calls))).toBe(200);
  await server.catchUp();
}

/** The error envelope Errata suggests, as a JSON text: a failure that keeps the untyped-error fix's contract. */
const TYPED_FAILURE = '{"errorCategory":"transient","isRetryable":true,"description":"retry later"}';

/** A call of `tool` of server cost-t's `version` at each of `times` (ms), failing untyped or typed; projected. */
async function callsAt(tool: string, version: string, times: readonly number[], untyped: boolean) {
  const trace = new AgentTrace();
  let spans: ReturnType<AgentTrace['run']> = [];
  for (const at of times) {
    const call = {
      tool,
      server: 'cost-t',
      startMs: at,
      durationMs: 1,
      isError: true,
      text: untyped ? 'upstream request failed' : TYPED_FAILURE,
      extra: { 'errata.server.version': version },
    };
    spans = trace.run('agent', at, [call]);
  }
  expect(await sendSpans(server.url, server.ingestKey, spans)).toBe(200);
  await server.catchUp();
}

async function own(serverName: string): Promise<void> {
  await server.app.get(OwnerRepository).create({
    projectId: await defaultProjectId(server.db),
    serverName,
    versionRange: null,
    webhookUrl: 'http://127.0.0.1:9/hooks', // never called: deliveries are not polled
    contact: null,
    secret: 'whsec_' + Buffer.from('fix-rounds-secret-fix-rounds-123').toString('base64'),
  });
}

it('given nothing new, a round sends as many statements for 30 owned findings as for 3', async () => {
  const fixes = server.app.get(FixService);
  await own('cost-a');
  await failingTools('cost-a', 3);
  const suggested = await fixes.runOnce();
  expect(suggested.length).toBeGreaterThanOrEqual(3);
  const few = await statementsOf(() => fixes.runOnce());
  expect(few.result).toEqual([]);

  await own('cost-b');
  await failingTools('cost-b', 27);
  expect((await fixes.runOnce()).length).toBeGreaterThanOrEqual(27);
  const many = await statementsOf(() => fixes.runOnce());
  expect(many.result).toEqual([]);

  expect(many.statements).toBe(few.statements);
});

it("given new owned findings, a round reads the project's sums as often for 30 as for 3", async () => {
  // The webhooks' details (samples, suggested contract) read every finding's sums: once per round, not per finding.
  const fixes = server.app.get(FixService);
  const sumsRead = (sent: readonly Statement[]) =>
    sent.filter(({ text }) => /\bfinding_rollup\b/.test(text)).length;
  await own('first-a');
  await failingTools('first-a', 1);
  await fixes.runOnce(); // a fix to follow in both rounds below, and nothing left from the tests before

  await failingTools('first-a', 3, 1);
  const few = await statementsOf(() => fixes.runOnce());
  expect(few.result).toHaveLength(3);

  await failingTools('first-a', 30, 4);
  const many = await statementsOf(() => fixes.runOnce());
  expect(many.result).toHaveLength(30);

  expect(sumsRead(many.sent)).toBe(sumsRead(few.sent));
});

it("reads a finding's messages through the index on the project's finding ids, not by scanning every message", async () => {
  // Given 10,000 messages about other findings
  await own('index-t');
  await sql`INSERT INTO webhook_delivery (project_id, owner_id, finding_id, msg_id, dedupe_key, event_type, payload)
            SELECT o.project_id, o.id, md5(g::text), 'msg_' || g, 'errata.fix.suggested:' || md5(g::text) || ':',
                   'errata.fix.suggested', '{}'
              FROM server_owner o, generate_series(1, 10000) g
             WHERE o.server_name = 'index-t'`.execute(server.db);
  await sql`ANALYZE webhook_delivery`.execute(server.db);

  // When one finding's are read: where its webhooks stand (GET /findings/{id}), which owners have a fix's latest news
  const deliveries = server.app.get(DeliveryRepository);
  const projectId = await defaultProjectId(server.db);
  const findingId = 'f'.repeat(20);
  const { sent } = await statementsOf(async () => {
    await deliveries.findingStatus(projectId, findingId);
    await deliveries.ownersSent(projectId, [{ findingId, dedupeKey: `errata.fix.suggested:${findingId}:` }]);
  });
  expect(sent).toHaveLength(3);

  // Then each reads them through the index, by the finding's id
  for (const { text, values } of sent) {
    const { rows } = await server.db.executeQuery<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      CompiledQuery.raw(`EXPLAIN (FORMAT JSON) ${text}`, [...values]),
    );
    const scans = planNodes(rows[0]!['QUERY PLAN'][0].Plan).filter(
      (node) => node['Relation Name'] === 'webhook_delivery' || node['Index Name'] !== undefined,
    );
    expect(scans).not.toHaveLength(0);
    for (const scan of scans)
      expect(scan).toMatchObject({
        'Index Name': 'webhook_delivery_finding_idx',
        'Index Cond': expect.stringContaining('finding_id ='),
      });
  }
});

it('skips a round while another instance runs one, and runs it once that instance is gone', async () => {
  // Given new owned findings, and another instance's round under way: its connection holds the round's lock
  const fixes = server.app.get(FixService);
  await own('round-lock');
  await failingTools('round-lock', 2);
  const other = new Client({ connectionString: server.databaseUrl! });
  await other.connect();
  try {
    await other.query('SELECT pg_advisory_lock($1, $2)', [...FIX_ROUND_LOCK]);

    // When this instance's round comes, it reads nothing and decides nothing
    const skipped = await statementsOf(() => fixes.runOnce());
    expect(skipped.result).toEqual([]);
    expect(skipped.sent.filter(({ text }) => /\bfinding_rollup\b|\bfix\b/.test(text))).toEqual([]);
  } finally {
    // Then the other instance dies mid-round, its lock with its connection
    await other.end();
  }
  // (its backend exits after the connection closes)
  await until('the round lock freed', async () => {
    const { rows } = await sql<{ held: boolean }>`
      SELECT count(*) > 0 AS held FROM pg_locks
       WHERE locktype = 'advisory' AND classid = ${FIX_ROUND_LOCK[0]} AND objid = ${FIX_ROUND_LOCK[1]}`.execute(
      server.db,
    );
    return rows[0]?.held === false;
  });
  const suggested = await fixes.runOnce();
  expect(suggested.map((event) => event.type)).toEqual(['FixSuggested', 'FixSuggested']);
});

it('counts the traffic after a suggestion made days ago from its partial hour, its hours and its days, and none before', async () => {
  // Given a fix of 1.0.0 suggested about 50 hours ago, half an hour before a whole hour
  const hour = 3_600_000;
  const day = 24 * hour;
  const from = Math.floor(Date.now() / hour) * hour - 50 * hour + hour / 2;
  const fromHour = from + hour / 2;
  const fromDay = Math.ceil(fromHour / day) * day;
  await own('cost-t');
  await callsAt('late_tool', '1.0.0', [from - 20 * 60_000], true);
  const fixes = server.app.get(FixService);
  const [suggested] = (await fixes.runOnce()).filter((event) => event.type === 'FixSuggested');
  const findingId = suggested!.data.findingId;
  await sql`UPDATE fix SET body = jsonb_set(body, '{suggestedAt}', to_jsonb(${new Date(from).toISOString()}::text))
             WHERE finding_id = ${findingId}`.execute(server.db);

  // When calls of 1.1.0, failing typed, come just before it, then in its partial hour, a whole hour, a whole day and now:
  // four after the suggestion, one short of verifying it (five would, were the one before counted)
  const now = Date.now();
  await callsAt('late_tool', '1.1.0', [from - 10 * 60_000, from + 10 * 60_000, fromHour + 5 * 60_000], false);
  await callsAt('late_tool', '1.1.0', [fromDay + hour, now - 2 * 60_000], false);
  expect(await fixes.runOnce()).toEqual([]);

  // Then a fifth after it verifies the fix, with the calls after the suggestion counted
  await callsAt('late_tool', '1.1.0', [now - 60_000], false);
  const verified = (await fixes.runOnce()).filter((event) => event.data.findingId === findingId);
  expect(verified).toMatchObject([
    { type: 'FixVerified', data: { version: '1.1.0', calls: 5, badVersions: [] } },
  ]);
});

/** A node of a plan EXPLAIN (FORMAT JSON) prints, with the fields the test reads. */
interface PlanNode {
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Index Cond'?: string;
  readonly Plans?: readonly PlanNode[];
}

function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}
