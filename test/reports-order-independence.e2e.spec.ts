/**
 * Issue 4's property: telemetry arrives out of order, in arbitrary batches and sometimes twice, and the reports
 * must not care. A generated corpus of agent traces (coordinator and subagent runs, tool calls of every
 * outcome, retries, escalations, subagent reports) is delivered through real OTLP/HTTP ingest into fresh
 * projects of one real Errata — permuted, cut into random batches, with random batches sent twice — and every
 * report and the findings must equal those of the corpus delivered in order, in one request.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ProjectRepository } from '../apps/server/src/repositories/project.repository';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { generatedCorpus } from './support/generated-corpus';
import { sendSpans, startTestServer, type TestServer } from './support/server';

const SPANS = generatedCorpus({ traces: 12, seed: 42 });
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('postgres');
});
afterAll(() => server?.close());

async function freshProject(name: string): Promise<{ ingest: string; read: string }> {
  const project = await server.app.get(ProjectRepository).ensureProject(name);
  const keys = server.app.get(ApiKeyService);
  return {
    ingest: (await keys.create(project.id, 'ingest', 'cli')).key,
    read: (await keys.create(project.id, 'read', 'cli')).key,
  };
}

async function deliver(batches: ReadableSpan[][], ingestKey: string): Promise<void> {
  for (const batch of batches) expect(await sendSpans(server.url, ingestKey, batch)).toBe(200);
}

const PATHS = [
  'reports/retry-waste?groupBy=category',
  'reports/retry-waste?groupBy=tool',
  'reports/escalations',
  'reports/misclassified-results',
  'reports/subagent-coverage',
  'findings',
];

async function reports(readKey: string): Promise<string[]> {
  await server.catchUp();
  return Promise.all(
    PATHS.map(async (path) => {
      const response = await fetch(`${server.url}/api/v1/${path}`, {
        headers: { authorization: `Bearer ${readKey}` },
      });
      return `${path} ${await response.text()}`;
    }),
  );
}

let project = 0;

it('random permutations, batchings and duplications of the corpus give identical reports', async () => {
  const inOrder = await freshProject(`in-order`);
  await deliver([SPANS], inOrder.ingest);
  const expected = await reports(inOrder.read);
  expect(expected.join('\n')).toContain('"calls":');

  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.nat(), { minLength: SPANS.length, maxLength: SPANS.length }),
      fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 40 }),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }),
      async (order, sizes, twice) => {
        const shuffled = SPANS.map((span, i) => ({ span, key: order[i]! }))
          .sort((a, b) => a.key - b.key)
          .map((x) => x.span);
        const batches: ReadableSpan[][] = [];
        for (let at = 0, i = 0; at < shuffled.length; i++) {
          const size = sizes[i % sizes.length]!;
          batches.push(shuffled.slice(at, at + size));
          at += size;
        }
        const delivered = batches.flatMap((batch, i) => (twice[i % twice.length] ? [batch, batch] : [batch]));
        const keys = await freshProject(`shuffled-${++project}`);
        await deliver(delivered, keys.ingest);
        expect(await reports(keys.read)).toEqual(expected);
      },
    ),
    { numRuns: 6, seed: 20261130 },
  );
}, 120_000);
