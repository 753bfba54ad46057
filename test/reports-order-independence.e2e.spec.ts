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
import { TraceItemsRepository } from '../apps/server/src/repositories/trace-items.repository';
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

it('two traces that reuse span ids stay two traces, whether they arrive in one request or two', async () => {
  // OTLP makes span ids unique within a trace only: a replay tool or a fixed id generator repeats them
  const at = Date.now() - 60 * 60_000;
  const value = (v: string | boolean) => (typeof v === 'boolean' ? { boolValue: v } : { stringValue: v });
  const span = (traceId: string, spanId: string, name: string, startMs: number, attributes: object) => ({
    traceId,
    spanId,
    parentSpanId: spanId === '00000000000000f0' ? undefined : '00000000000000f0',
    name,
    kind: name.startsWith('tools/call') ? 3 : 1,
    startTimeUnixNano: String(BigInt(startMs) * 1_000_000n),
    endTimeUnixNano: String(BigInt(startMs + 100) * 1_000_000n),
    attributes: Object.entries(attributes).map(([key, v]) => ({ key, value: value(v as string | boolean) })),
    status: { code: 'errata.result.text' in attributes ? 2 : 1 },
  });
  const call = (
    traceId: string,
    spanId: string,
    server: string,
    tool: string,
    startMs: number,
    failure?: string,
  ) =>
    span(traceId, spanId, `tools/call ${tool}`, startMs, {
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': tool,
      'errata.server.name': server,
      'errata.args.hash': 'ab'.repeat(16),
      'errata.result.is_error': failure !== undefined,
      ...(failure === undefined ? {} : { 'error.type': 'tool_error', 'errata.result.text': failure }),
    });
  const agent = (traceId: string, name: string, startMs: number) =>
    span(traceId, '00000000000000f0', `invoke_agent ${name}`, startMs, {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': name,
    });
  const denied = 'Access denied - path outside allowed directories: /etc/passwd';
  const [a, b] = ['a1'.repeat(16), 'b2'.repeat(16)];
  // Given an agent whose read_file failed twice, and in another trace one whose get_article answered twice
  const failing = [
    agent(a, 'alpha', at),
    call(a, '0000000000000001', 'files', 'read_file', at + 1_000, denied),
    call(a, '0000000000000002', 'files', 'read_file', at + 2_000, denied),
  ];
  // The runtime said the second is a retry of the first: a hint names a span id, here one trace b has too
  failing[2]!.attributes.push({ key: 'errata.retry.of', value: value('0000000000000001') });
  const answering = [
    agent(b, 'beta', at + 5_000),
    call(b, '0000000000000001', 'kb', 'get_article', at + 6_000),
    call(b, '0000000000000002', 'kb', 'get_article', at + 7_000),
  ];
  const post = async (ingestKey: string, spans: object[]) => {
    const response = await fetch(`${server.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ingestKey}` },
      body: JSON.stringify({ resourceSpans: [{ scopeSpans: [{ scope: { name: 'replay' }, spans }] }] }),
    });
    expect(response.status).toBe(200);
  };
  // When they arrive in one request, and, in another project, in two projected apart
  const together = await freshProject('reused-span-ids-together');
  await post(together.ingest, [...failing, ...answering]);
  const apart = await freshProject('reused-span-ids-apart');
  await post(apart.ingest, failing);
  await server.catchUp();
  await post(apart.ingest, answering);
  // Then the reports are the same, and each trace's calls are its own
  const reported = await reports(together.read);
  expect(reported).toEqual(await reports(apart.read));
  const byTool = JSON.parse(reported[1]!.slice(reported[1]!.indexOf(' ') + 1)) as {
    totals: { calls: number; retries: number };
    groups: { tool: string; retries: number }[];
  };
  expect(byTool.totals).toMatchObject({ calls: 4, retries: 1 });
  expect(byTool.groups.map((group) => [group.tool, group.retries])).toEqual([['read_file', 1]]);
  const findings = JSON.parse(reported[5]!.slice(reported[5]!.indexOf(' ') + 1)) as {
    findings: { tool: string }[];
  };
  expect(new Set(findings.findings.map((finding) => finding.tool))).toEqual(new Set(['read_file']));
  // And a hint naming a call of its own trace reads no other trace that has that span id too
  const project = await server.app.get(ProjectRepository).findProject('reused-span-ids-together');
  const linked = await server.app
    .get(TraceItemsRepository)
    .retryLinkedTraces(server.db, [{ projectId: project!.id, traceId: a }]);
  expect(linked).toEqual({ derived: [{ projectId: project!.id, traceId: a }], context: [] });
  // And each trace's timeline holds its own calls, though a's hint names a span id b has too
  for (const [traceId, calls] of [
    [
      a,
      [
        ['read_file', null],
        ['read_file', 'non_retryable'],
      ],
    ],
    [
      b,
      [
        ['get_article', null],
        ['get_article', null],
      ],
    ],
  ] as const) {
    const timeline = await fetch(`${server.url}/api/v1/traces/${traceId}`, {
      headers: { authorization: `Bearer ${together.read}` },
    });
    const { items } = (await timeline.json()) as {
      items: { kind: string; tool?: string; retry?: { label: string } | null }[];
    };
    const shown = items.filter((item) => item.kind === 'call');
    expect(shown.map((item) => [item.tool, item.retry?.label ?? null])).toEqual(calls);
  }

  // And when a hint links two traces that reuse a span id (d's retry names a call only c has), each timeline shows
  // its own call's stored text under that span id, not the other trace's
  const [c, d] = ['c3'.repeat(16), 'd4'.repeat(16)];
  const linkedTraces = [
    agent(c, 'gamma', at + 10_000),
    call(c, '0000000000000001', 'files', 'read_file', at + 11_000, 'Access denied: text of trace c'),
    call(c, '0000000000000005', 'files', 'stat_file', at + 12_000, 'Timed out in trace c'),
    agent(d, 'delta', at + 13_000),
    call(d, '0000000000000001', 'files', 'read_file', at + 14_000, 'Access denied: text of trace d'),
    call(d, '0000000000000003', 'files', 'stat_file', at + 15_000, 'Timed out in trace d'),
  ];
  linkedTraces[5]!.attributes.push({ key: 'errata.retry.of', value: value('0000000000000005') });
  await post(together.ingest, linkedTraces);
  await server.catchUp();
  for (const traceId of [c, d]) {
    const timeline = await fetch(`${server.url}/api/v1/traces/${traceId}`, {
      headers: { authorization: `Bearer ${together.read}` },
    });
    const { items } = (await timeline.json()) as { items: { spanId: string; text: string | null }[] };
    const which = traceId === c ? 'c' : 'd';
    expect(items.find((item) => item.spanId === '0000000000000001')?.text).toBe(
      `Access denied: text of trace ${which}`,
    );
  }
});
