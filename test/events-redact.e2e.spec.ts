/**
 * `errata events redact`: texts an older release stored with a redaction that caught less are redacted again in the
 * event log, and the read models rebuilt from it, so that REST serves them as this release stores them. The built CLI,
 * on real PostgreSQL beside a running Errata, and on the embedded PGlite (which one process opens at a time).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { normalizeSpan, SpanKind, StatusCode, type SpanRecord, type ToolCallData } from '@errata/domain';
import { DATABASE, type Database } from '../apps/server/src/database/database';
import { EventRepository, type NewEvent } from '../apps/server/src/repositories/event.repository';
import { runCliWithEnv, type CliRun } from './support/cli';
import { seedEmbeddedStore } from './support/embedded-store';
import { defaultProjectId, startTestServer, type TestServer } from './support/server';

/** The audit's texts, as a release without Errata's own key pattern and the Cookie header rule stored them. */
const ERRATA_KEY_TEXT = 'upstream refused key errata_ingest_AbCdEfGhIjKlMnOpQrStUvWxYz012345 (unauthorized)';
const OLD_COOKIE_TEXT = 'Cookie: session=abc123def; csrftoken=[REDACTED:secret]';
const LEAKED = /errata_ingest_AbCd|session=abc123def/;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** A failed tool call as ingest stores it now, with `old` texts put back as an older release had stored them. */
function oldToolCall(traceId: string, startMs: number, old: (data: ToolCallData) => ToolCallData): NewEvent {
  const start = BigInt(startMs) * 1_000_000n;
  const span: SpanRecord = {
    traceId,
    spanId: hex(8),
    parentSpanId: null,
    name: 'tools/call charge',
    kind: SpanKind.CLIENT,
    startTimeUnixNano: start,
    endTimeUnixNano: start + 20_000_000n,
    attributes: {
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'charge',
      'errata.server.name': 'payments',
      'errata.result.is_error': true,
      'errata.result.text': 'upstream refused',
    },
    status: { code: StatusCode.ERROR, message: '' },
    resource: {},
    scope: { name: 'manual', version: '' },
  };
  const event = normalizeSpan(span);
  if (event?.type !== 'ToolCallObserved') throw new Error('no tool call');
  return {
    traceId,
    spanId: span.spanId,
    parentSpanId: null,
    startMicros: startMs * 1000,
    endMicros: startMs * 1000 + 20_000,
    type: event.type,
    serverName: event.data.server.name,
    toolName: event.data.tool,
    outcome: event.data.outcome,
    data: old(event.data),
  };
}

/** Two failed calls of one trace, stored straight into the log (bypassing today's ingest) as an older release had. */
async function appendOldEvents(server: TestServer, traceId: string): Promise<void> {
  const database = server.app.get<Database>(DATABASE);
  const now = Date.now() - 60_000;
  const events = [
    oldToolCall(traceId, now, (data) => ({ ...data, result: { ...data.result, text: ERRATA_KEY_TEXT } })),
    oldToolCall(traceId, now + 100, (data) => ({
      ...data,
      statusMessage: OLD_COOKIE_TEXT,
      result: { ...data.result, text: null },
    })),
  ];
  const projectId = await defaultProjectId(server.db);
  await new EventRepository(database).append(projectId, events, [], {
    received: 2,
    dropped: 0,
    rejected: 0,
  });
  await server.catchUp();
}

async function read(server: TestServer, path: string): Promise<unknown> {
  const response = await fetch(`${server.url}/api/v1/${path}`, {
    headers: { authorization: `Bearer ${server.readKey}` },
  });
  expect(response.status).toBe(200);
  return response.json();
}

/** The texts REST serves of the trace (its timeline) and of the calls' finding (its samples). */
async function servedTexts(server: TestServer, traceId: string) {
  const trace = (await read(server, `traces/${traceId}`)) as { items: { text: string | null }[] };
  const window = 'from=2020-01-01&to=2035-01-01';
  const list = (await read(server, `findings?${window}&rule=untyped-error`)) as {
    findings: { id: string }[];
  };
  const samples = await Promise.all(
    list.findings.map(
      async ({ id }) =>
        ((await read(server, `findings/${id}?${window}`)) as { samples: { text: string | null }[] }).samples,
    ),
  );
  return {
    timeline: trace.items.map((item) => item.text).sort(),
    samples: samples
      .flat()
      .map((sample) => sample.text)
      .sort(),
  };
}

async function eventLogLeaks(server: TestServer): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM event
     WHERE data::text LIKE '%errata_ingest_AbCd%' OR data::text LIKE '%session=abc123def%'`.execute(
    server.db,
  );
  return rows[0]!.n;
}

/** A webhook message as the fix service writes one, its finding's sample holding the old text. */
async function queueOldWebhookMessage(server: TestServer): Promise<{ id: string; payload: string }> {
  const projectId = await defaultProjectId(server.db);
  const payload = JSON.stringify({
    type: 'fix.suggested',
    timestamp: '2026-11-30T12:00:00.000Z',
    data: {
      fix: { findingId: '0123456789abcdef0123', state: 'suggested' },
      finding: {
        id: '0123456789abcdef0123',
        rule: 'untyped-error',
        samples: [
          { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), evidence: 'untyped', text: ERRATA_KEY_TEXT },
          {
            traceId: 'a'.repeat(32),
            spanId: 'c'.repeat(16),
            evidence: 'untyped',
            text: 'Order 12 not found',
          },
        ],
      },
      suggestedContract: { code: 'CHARGE_REFUSED' },
    },
  });
  const { rows } = await sql<{ id: string }>`
    WITH owner AS (
      INSERT INTO server_owner (project_id, server_name, webhook_url, secrets)
      VALUES (${projectId}, 'payments', 'http://127.0.0.1:9/hook', ARRAY['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'])
      RETURNING id)
    INSERT INTO webhook_delivery (project_id, owner_id, finding_id, msg_id, dedupe_key, event_type, payload, status)
    SELECT ${projectId}, id, '0123456789abcdef0123', 'msg_1', 'suggested', 'fix.suggested', ${payload}, 'dead'
      FROM owner RETURNING id`.execute(server.db);
  return { id: rows[0]!.id, payload };
}

async function payloadOf(server: TestServer, id: string): Promise<string> {
  const row = await server.db
    .selectFrom('webhook_delivery')
    .select('payload')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return row.payload;
}

const OLD_TEXTS = [ERRATA_KEY_TEXT, OLD_COOKIE_TEXT].sort();
const REDACTED_TEXTS = [
  'Cookie: [REDACTED:secret]',
  'upstream refused key [REDACTED:api_key] (unauthorized)',
].sort();

/** What the dry run, the run and a second run say, checked the same on both stores. */
function expectRuns(asked: CliRun, redacted: CliRun, again: CliRun, messages = ''): void {
  expect(asked.code).toBe(0);
  expect(asked.stdout).toMatch(
    new RegExp(
      `^would redact again 2 texts in 2 events \\(all projects; \\d+ read\\)${messages}; run again with --yes to rewrite them\n$`,
    ),
  );
  expect(asked.stderr).toMatch(/reading the event log \[#+\] 100%/);
  expect(redacted.code).toBe(0);
  expect(redacted.stderr).toMatch(/redacting events \[#+\] 100% 2\/2/);
  expect(redacted.stdout).toMatch(
    new RegExp(
      `^redacted again 2 texts in 2 events \\(all projects\\)${messages}\nrebuilt read models and rollups from \\d+ events and span edges`,
    ),
  );
  expect(again.code).toBe(0);
  expect(again.stdout).toMatch(
    /^nothing to redact: every text in the event log \(all projects; \d+ events read\) is redacted as this Errata redacts\n$/,
  );
}

describe('on PostgreSQL, beside a running Errata', () => {
  let server: TestServer;
  afterAll(() => server?.close());

  it('redacts the texts an older release stored, and REST serves them redacted; a second run changes nothing', async () => {
    // Given a log where an older release stored an Errata key and a Cookie header, which REST serves as they are
    server = await startTestServer('postgres', { ERRATA_PROJECTION_POLL_MS: '3600000' });
    const redact = (...args: string[]) =>
      runCliWithEnv({ DATABASE_URL: server.databaseUrl! }, 'events', 'redact', ...args);
    const traceId = hex(16);
    await appendOldEvents(server, traceId);
    expect(await servedTexts(server, traceId)).toEqual({ timeline: OLD_TEXTS, samples: OLD_TEXTS });
    // and a webhook message written then, with a sample of that text (the outbox keeps it for a redelivery)
    const message = await queueOldWebhookMessage(server);

    // When asked without --yes, it says what would change, and changes nothing
    const asked = await redact();
    expect(await eventLogLeaks(server)).toBe(2);
    // When told to, it rewrites those texts and rebuilds the read models (the server beside may share the work)
    const redacted = await redact('--yes');
    // and a second run finds nothing to do
    const again = await redact('--yes');
    expectRuns(asked, redacted, again, ' and the samples of 1 webhook message');

    // Then the log holds no secret, and REST serves the texts as this release stores them
    expect(await eventLogLeaks(server)).toBe(0);
    await server.catchUp();
    expect(await servedTexts(server, traceId)).toEqual({ timeline: REDACTED_TEXTS, samples: REDACTED_TEXTS });
    // the webhook message carries the sample redacted, and nothing else of it changed
    expect(JSON.parse(await payloadOf(server, message.id))).toEqual(
      JSON.parse(
        message.payload.replace(ERRATA_KEY_TEXT, 'upstream refused key [REDACTED:api_key] (unauthorized)'),
      ),
    );
    // nor does any read model, rollup or other table hold one
    const tables = await sql<{ name: string }>`
      SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()`.execute(server.db);
    for (const { name } of tables.rows) {
      const rows = await sql<{ row: string }>`SELECT t::text AS row FROM ${sql.table(name)} t`.execute(
        server.db,
      );
      expect(rows.rows.filter((row) => LEAKED.test(row.row)).map((row) => `${name}: ${row.row}`)).toEqual([]);
    }
  });

  it('refuses a project that does not exist', async () => {
    const nobody = await runCliWithEnv(
      { DATABASE_URL: server.databaseUrl! },
      'events',
      'redact',
      '--project',
      'nobody',
    );
    expect(nobody.code).toBe(2);
    expect(nobody.stderr).toMatch(/^errata: project "nobody" does not exist/);
  });
});

describe('on the embedded PGlite', () => {
  it('redacts the texts an older release stored, and REST serves them redacted once the server is back', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'errata-redact-pglite-'));
    await seedEmbeddedStore(dataDir);
    let server: TestServer | undefined;
    try {
      // Given an embedded store where an older release stored the texts
      const traceId = hex(16);
      server = await startTestServer('pglite', { ERRATA_DATA_DIR: dataDir, DATABASE_URL: '' });
      await appendOldEvents(server, traceId);
      expect(await servedTexts(server, traceId)).toEqual({ timeline: OLD_TEXTS, samples: OLD_TEXTS });
      await server.close();
      server = undefined;
      // When the CLI redacts it (the server stopped: one process opens the store)
      const redact = (...args: string[]) =>
        runCliWithEnv({ ERRATA_DATA_DIR: dataDir, DATABASE_URL: '' }, 'events', 'redact', ...args);
      const asked = await redact();
      const redacted = await redact('--yes');
      const again = await redact('--yes');
      expectRuns(asked, redacted, again);
      // Then, the server started again, the log holds no secret and REST serves the texts redacted
      server = await startTestServer('pglite', { ERRATA_DATA_DIR: dataDir, DATABASE_URL: '' });
      expect(await eventLogLeaks(server)).toBe(0);
      await server.catchUp();
      expect(await servedTexts(server, traceId)).toEqual({
        timeline: REDACTED_TEXTS,
        samples: REDACTED_TEXTS,
      });
    } finally {
      await server?.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
