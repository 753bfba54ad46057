/**
 * Issue 4's property: telemetry arrives out of order, in arbitrary batches and sometimes twice, and the reports
 * must not care. A generated corpus of agent traces (coordinator and subagent runs, tool calls of every
 * outcome, retries, escalations, subagent reports) is delivered through real OTLP/HTTP ingest into fresh
 * projects of one real Errata — permuted, cut into random batches, with random batches sent twice — and every
 * report and the findings must equal those of the corpus delivered in order, in one request.
 */
import { context, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ProjectRepository } from '../apps/server/src/repositories/project.repository';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { startTestServer, type TestServer } from './support/server';

const T0 = Date.UTC(2026, 10, 30, 9);
const OUTCOMES = [
  { isError: false, empty: false, text: undefined },
  { isError: false, empty: true, text: '{"orders":[]}' },
  { isError: true, empty: false, text: '{"errorCategory":"transient","isRetryable":true,"retryAfterMs":50}' },
  {
    isError: true,
    empty: false,
    text: '{"ok":false,"error":{"code":"NO_TICKETS_FOUND","category":"not_found"}}',
  },
  {
    isError: true,
    empty: false,
    text: '{"errorCategory":"business","retriable":false,"customerExplanation":"Outside the window."}',
  },
  { isError: true, empty: false, text: 'TypeError: Cannot read properties of undefined' },
  { isError: false, empty: false, text: 'ERROR: Permission denied' },
] as const;

/** A deterministic corpus: `traces` agent traces from a seeded generator. */
function corpus(traces: number, seed: number): ReadableSpan[] {
  let state = seed;
  const next = (n: number) => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31), state % n);
  const memory = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'generated-agent' }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  }).getTracer('corpus');
  const agentSpan = (name: string, startMs: number, parent = context.active(), role?: string) =>
    tracer.startSpan(
      `invoke_agent ${name}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: startMs,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': name,
          ...(role ? { 'errata.agent.role': role } : {}),
        },
      },
      parent,
    );
  const toolCall = (parent: ReturnType<typeof context.active>, tool: string, startMs: number) => {
    const outcome = OUTCOMES[next(OUTCOMES.length)]!;
    const attributes: Attributes = {
      'mcp.method.name': 'tools/call',
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': tool,
      'errata.server.name': `server-${tool.length % 3}`,
      'errata.server.version': '1.0.0',
      'errata.args.hash': `hash-${next(2)}`,
      'errata.args.size': 10,
      'errata.result.is_error': outcome.isError,
      'errata.result.empty': outcome.empty,
      ...(outcome.text === undefined ? {} : { 'errata.result.text': outcome.text }),
      ...(outcome.isError ? { 'error.type': 'tool_error' } : {}),
    };
    const span = tracer.startSpan(
      `tools/call ${tool}`,
      { kind: SpanKind.CLIENT, startTime: startMs, attributes },
      parent,
    );
    if (outcome.isError) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(startMs + 5 + next(20));
  };
  const instant = (
    parent: ReturnType<typeof context.active>,
    name: string,
    atMs: number,
    attributes: Attributes,
  ) => tracer.startSpan(name, { kind: SpanKind.INTERNAL, startTime: atMs, attributes }, parent).end(atMs);

  for (let t = 0; t < traces; t++) {
    const start = T0 + t * 1_000;
    const coordinator = agentSpan('support', start, context.active(), 'coordinator');
    const inRun = trace.setSpan(context.active(), coordinator);
    const tools = ['lookup_order', 'search_tickets', 'process_refund'];
    for (let c = 0; c < 2 + next(4); c++) toolCall(inRun, tools[next(tools.length)]!, start + c * 40);
    if (next(2) === 0)
      instant(inRun, 'errata.escalation', start + 300, {
        'errata.escalation.target': ['human', 'user', 'coordinator'][next(3)]!,
      });
    const subagent = agentSpan('research', start + 400, inRun);
    const inSub = trace.setSpan(inRun, subagent);
    for (let c = 0; c < 1 + next(3); c++) toolCall(inSub, 'search_web', start + 410 + c * 40);
    instant(inSub, 'errata.subagent_report', start + 600, {
      'errata.subagent.status': ['complete', 'partial', 'failed'][next(3)]!,
      'errata.subagent.completed': next(4),
      'errata.subagent.total': 4,
      ...(next(2) === 0
        ? { 'errata.subagent.attempted': ['search_web'], 'errata.error.category': 'transient' }
        : {}),
    });
    subagent.end(start + 650);
    coordinator.end(start + 700);
  }
  return memory.getFinishedSpans();
}

const SPANS = corpus(12, 42);
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
  for (const batch of batches) {
    const response = await fetch(`${server.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', authorization: `Bearer ${ingestKey}` },
      body: ProtobufTraceSerializer.serializeRequest(batch)!,
    });
    expect(response.status).toBe(200);
  }
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
