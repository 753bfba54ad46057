/**
 * A report made of several reads of the rollups (a page of groups, then their samples; calls, then findings) reads
 * them from one snapshot. Here the projector commits a batch between a report's first read and the one named in
 * each case, as a busy server's does: the answer must be the one from before the batch, and the next answer must
 * show the batch. Read apart, the findings showed more offences than calls (a rate above 1), and the pages groups
 * without their newest samples.
 *
 * PostgreSQL only: on embedded PGlite every request shares one connection, which the snapshot holds, so no batch can
 * commit in between (the ingest waits for the read).
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RollupQueryRepository } from '../apps/server/src/repositories/rollup-query.repository';
import { FindingsService } from '../apps/server/src/services/findings.service';
import { AgentTrace } from './support/agent-spans';
import { defaultProjectId, sendSpans, startTestServer, type TestServer } from './support/server';
import { statementsOf } from './support/statements';

const t0 = Date.UTC(2026, 10, 30, 8, 30);
const MINUTE = 60_000;
const WINDOW = 'from=2026-11-30T00:00:00Z&to=2026-12-01T00:00:00Z';

/** One of everything the reports count: wasted retries, an untyped error, both misclassifications, a subagent. */
function wave(startMs: number): ReadableSpan[] {
  const agentTrace = new AgentTrace();
  const denied = (ms: number) => ({
    tool: 'read_records',
    server: 'records',
    startMs: startMs + ms,
    durationMs: 5,
    isError: true,
    category: 'permission',
    text: 'Access denied to financial records',
  });
  agentTrace.run('triage-bot', startMs, [
    denied(0),
    denied(1_000),
    denied(2_000),
    {
      tool: 'lookup',
      server: 'orders',
      startMs: startMs + 3_000,
      durationMs: 5,
      isError: true,
      text: 'boom',
    },
    { tool: 'lookup', server: 'orders', startMs: startMs + 4_000, durationMs: 5 },
    {
      tool: 'search',
      server: 'orders',
      startMs: startMs + 5_000,
      durationMs: 5,
      isError: true,
      text: 'No orders found for this customer',
    },
    {
      tool: 'read_file',
      server: 'files',
      startMs: startMs + 6_000,
      durationMs: 5,
      text: 'ERROR: Permission denied',
    },
  ]);
  agentTrace.run(
    'web-research',
    startMs + 7_000,
    [
      {
        tool: 'search_web',
        server: 'web',
        startMs: startMs + 7_000,
        durationMs: 5,
        isError: true,
        category: 'transient',
        text: 'rate limited',
      },
    ],
    'subagent',
  );
  agentTrace.subagentHandBack('news', startMs + 8_000);
  return agentTrace.spans();
}

type RollupRead = 'findingSums' | 'offenceTimelines' | 'latestWastedRetries' | 'callSums';

let server: TestServer;
let waves = 0;

beforeAll(async () => {
  server = await startTestServer('postgres');
  await deliver(wave(t0));
}, 60_000);
afterAll(() => server?.close());

async function deliver(spans: ReadableSpan[]): Promise<void> {
  expect(await sendSpans(server.url, server.ingestKey, spans)).toBe(200);
  await server.catchUp();
}

async function get(path: string): Promise<unknown> {
  const response = await fetch(`${server.url}/api/v1/${path}${path.includes('?') ? '&' : '?'}${WINDOW}`, {
    headers: { authorization: `Bearer ${server.readKey}` },
  });
  expect(response.status, path).toBe(200);
  return response.json();
}

/** Before `read`'s first call, the next wave is ingested and projected: a batch commits between the report's reads. */
function commitBefore(read: RollupRead, startMs: number): () => void {
  const repository = server.app.get(RollupQueryRepository) as unknown as Record<RollupRead, unknown>;
  const original = repository[read] as (...args: unknown[]) => Promise<unknown>;
  let committed = false;
  // An own property of the repository, so the snapshot's reads (whose prototype it is) meet it too.
  repository[read] = async function (this: unknown, ...args: unknown[]) {
    if (!committed) {
      committed = true;
      await deliver(wave(startMs));
    }
    return original.apply(this, args);
  };
  return () => delete (repository as Partial<Record<RollupRead, unknown>>)[read];
}

/**
 * `answer` once, then again with the next wave committed before its `read` (placed `earlier` or `later` in time than
 * the waves before): the second answer must be the first, and a third must show the wave.
 */
async function expectOneSnapshot(
  answer: () => Promise<unknown>,
  read: RollupRead,
  place: 'earlier' | 'later',
): Promise<void> {
  waves += 1;
  const before = await answer();
  const restore = commitBefore(read, place === 'later' ? t0 + waves * MINUTE : t0 - waves * MINUTE);
  let during: unknown;
  try {
    during = await answer();
  } finally {
    restore();
  }
  expect(during).toEqual(before);
  expect(await answer()).not.toEqual(before);
}

describe.each<[path: string, read: RollupRead, place: 'earlier' | 'later']>([
  // The findings' rates: calls read before the batch, offences after, gave 2 offences of 1 call.
  ['findings', 'findingSums', 'later'],
  ['servers', 'findingSums', 'later'],
  // Samples are a group's earliest offences, so the batch comes earlier in time to change them.
  ['reports/misclassified-results', 'offenceTimelines', 'earlier'],
  ['reports/retry-waste', 'latestWastedRetries', 'later'],
  ['reports/subagent-coverage', 'callSums', 'later'],
])('GET %s with a batch committed before its %s read', (path, read, place) => {
  it('answers from one snapshot, and shows the batch in the next answer', () =>
    expectOneSnapshot(() => get(path), read, place));
});

it("fixes' verification traffic (calls and offences per server version) is one statement, so one snapshot", async () => {
  const projectId = await defaultProjectId(server.db);
  const since = [
    { server: 'orders', tool: 'lookup', rule: 'untyped-error', from: new Date(Date.UTC(2026, 10, 30)) },
    { server: 'web', tool: 'search_web', rule: 'untyped-error', from: new Date(Date.UTC(2026, 10, 30)) },
  ] as const;
  const { result, statements } = await statementsOf(() =>
    server.app.get(FindingsService).versionTraffic(projectId, since),
  );
  expect(result.get(0)).not.toEqual(undefined);
  expect(statements).toBe(1);
});
