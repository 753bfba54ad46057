/**
 * A trace that keeps growing (an agent session kept open for hours) is re-derived whole at every batch, but only the
 * contributions that changed are written: the contributions and rollups a long trace ends with, delivered in small
 * batches, out of order, with late spans landing in its middle and a hinted retry from another trace, are exactly
 * those of the same spans derived at once; and a new call at its end rewrites none of the rows before it.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ProjectRepository } from '../apps/server/src/repositories/project.repository';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { laterCall, longTrace } from './support/long-trace';
import { sendSpans, startTestServer, type TestServer } from './support/server';

const START = Date.now() - 8 * 3_600_000;
const SESSION = longTrace({ turns: 60, seed: 7, startMs: START });
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('postgres');
});
afterAll(() => server?.close());

async function freshProject(name: string): Promise<{ id: number; ingest: string }> {
  const project = await server.app.get(ProjectRepository).ensureProject(name);
  return {
    id: project.id,
    ingest: (await server.app.get(ApiKeyService).create(project.id, 'ingest', 'cli')).key,
  };
}

/** Each batch projected before the next is sent: every batch re-derives the trace over what is stored. */
async function deliver(batches: readonly ReadableSpan[][], ingestKey: string): Promise<void> {
  for (const batch of batches) {
    expect(await sendSpans(server.url, ingestKey, batch)).toBe(200);
    await server.catchUp();
  }
}

/**
 * A project's contributions and rollup rows, every column but the project's, in one order. Rollup rows whose
 * measures are all zero are left out: a bucket a re-derived contribution moved out of keeps its row, at zero.
 */
async function derived(projectId: number): Promise<Record<string, string[]>> {
  const rows = async (table: string, zeroRows: boolean) => {
    const { rows } = await sql<{ row: string }>`
      SELECT (to_jsonb(t) - 'project_id')::text AS row FROM ${sql.table(table)} t
       WHERE project_id = ${projectId}
         AND (${zeroRows} OR EXISTS (SELECT 1 FROM jsonb_each(to_jsonb(t)) AS m (name, value)
                                      WHERE jsonb_typeof(m.value) = 'number'
                                        AND m.name NOT IN ('project_id', 'bucket_hours') AND m.value <> '0'))
       ORDER BY 1`.execute(server.db);
    return rows.map((r) => r.row);
  };
  return {
    contribution: await rows('contribution', true),
    call_rollup: await rows('call_rollup', false),
    finding_rollup: await rows('finding_rollup', false),
    report_rollup: await rows('report_rollup', false),
  };
}

let whole: { id: number; ingest: string };
let expected: Record<string, string[]>;

beforeAll(async () => {
  whole = await freshProject('whole');
  await deliver([SESSION.spans], whole.ingest);
  expected = await derived(whole.id);
});

it('a long trace delivered in small batches, out of order and with late spans, derives as it does whole', async () => {
  expect(expected.contribution.length).toBeGreaterThan(300);
  expect(expected.contribution.join('\n')).toContain('"retries": 1');
  expect(expected.contribution.join('\n')).toContain('"part": "report"');
  let run = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.nat(30), { minLength: SESSION.spans.length, maxLength: SESSION.spans.length }),
      fc.array(fc.boolean(), { minLength: SESSION.spans.length, maxLength: SESSION.spans.length }),
      fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 20 }),
      async (jitter, late, sizes) => {
        // Spans arrive a little out of order, and a few (one in eight) only after all the others.
        const order = SESSION.spans
          .map((span, i) => ({ span, key: i + jitter[i]! + (late[i] && jitter[i]! < 4 ? 1e6 : 0) }))
          .sort((a, b) => a.key - b.key)
          .map((x) => x.span);
        const batches: ReadableSpan[][] = [];
        for (let at = 0, i = 0; at < order.length; i++) {
          const size = sizes[i % sizes.length]!;
          batches.push(order.slice(at, at + size));
          at += size;
        }
        const project = await freshProject(`batched-${++run}`);
        await deliver(batches, project.ingest);
        expect(await derived(project.id)).toEqual(expected);
      },
    ),
    { numRuns: 4, seed: 20261203, endOnFailure: true },
  );
}, 120_000);

it('a new call at the end of a long trace rewrites none of the rows before it', async () => {
  const rowVersions = async () => {
    const { rows } = await sql<{ key: string; version: string }>`
      SELECT concat_ws(' ', encode(span_id, 'hex'), kind, part) AS key, xmin::text AS version FROM contribution
       WHERE project_id = ${whole.id} ORDER BY 1`.execute(server.db);
    return new Map(rows.map((row) => [row.key, row.version]));
  };
  const before = await rowVersions();

  const call = laterCall(SESSION, START + 7 * 3_600_000);
  await deliver([[call]], whole.ingest);

  const after = await rowVersions();
  expect(after.get(`${call.spanContext().spanId} call call`)).toBeDefined();
  expect(after.size).toBe(before.size + 1);
  const rewritten = [...before].filter(([key, version]) => after.get(key) !== version);
  expect(rewritten).toEqual([]);
});
