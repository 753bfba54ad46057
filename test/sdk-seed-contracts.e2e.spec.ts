/**
 * @errata/sdk against a fixture MCP server that returns every example payload of the seeds: the declared
 * category, retryability, code and retry-after are read in every spelling, and Errata classifies each call as
 * its seed says, after the spans' real OTLP round trip.
 */
import { classifyToolCall, type ToolCallData } from '@errata/domain';
import { instrumentMcpClient, toolCallSpanId, withToolCall } from '@errata/sdk';
import { diag } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { setErrataTracerProvider } from '../libs/sdk/src/tracer';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SEED_EXAMPLES } from '../libs/domain/src/seed-examples.spec-helper';
import {
  brokenTracerProvider,
  captureDiag,
  registerTestTracing,
  toEvents,
  type TestTracing,
} from '../libs/sdk/src/tracing.spec-helper';
import { connectSeedServer, seedServer } from './support/seed-mcp-server';
import { startTestServer } from './support/server';

let tracing: TestTracing;
let instrumented: Client;
let plain: Client;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  tracing = registerTestTracing();
  const a = await connectSeedServer();
  const b = await connectSeedServer();
  closers.push(a.close, b.close);
  instrumented = instrumentMcpClient(a.client);
  plain = b.client;
});
afterAll(async () => {
  for (const close of closers) await close();
});
beforeEach(() => tracing.reset());

function onlySpan() {
  const spans = tracing.spans();
  expect(spans).toHaveLength(1);
  return spans[0]!;
}

function toolCallOf(span: ReturnType<typeof onlySpan>): ToolCallData {
  const [event] = toEvents([span]);
  if (event?.type !== 'ToolCallObserved') throw new Error(`not a tool call: ${JSON.stringify(event)}`);
  return event.data;
}

describe('every seed example, through the SDK and Errata’s classification', () => {
  it.each(SEED_EXAMPLES.map((example, index) => [example.name, example, index] as const))(
    '%s',
    async (_name, example, index) => {
      const result = await instrumented.callTool({ name: example.tool, arguments: { example: index } });
      const span = onlySpan();
      expect(span.name).toBe(`tools/call ${example.tool}`);
      expect(span.attributes['errata.server.name']).toBe('seed-fixtures');
      expect(span.attributes['errata.server.version']).toBe('1.4.0');
      expect({
        category: span.attributes['errata.error.category'],
        retryable: span.attributes['errata.error.retryable'],
        code: span.attributes['errata.error.code'],
        retryAfterMs: span.attributes['errata.error.retry_after_ms'],
      }).toEqual({
        category: example.declared.category,
        retryable: example.declared.retryable,
        code: example.declared.code,
        retryAfterMs: example.declared.retryAfterMs,
      });
      expect(span.status.code).toBe(example.result.isError === true ? 2 : 0);

      const call = toolCallOf(span);
      const classification = classifyToolCall(call);
      expect(call.outcome).toBe(example.outcome);
      expect(classification.category ?? null).toBe(example.category);
      expect(classification.failureAsEmpty).toBe(example.failureAsEmpty === true);

      // The host gets exactly what an uninstrumented client gets.
      expect(result).toStrictEqual(
        await plain.callTool({ name: example.tool, arguments: { example: index } }),
      );
      expect(toolCallSpanId(result)).toBe(span.spanContext().spanId);
    },
  );
});

describe('the request', () => {
  it('carries the span’s W3C trace context in params._meta, merged with what the host put there; the host’s params are untouched', async () => {
    const params = {
      name: 'echo_meta',
      arguments: {},
      _meta: { progressToken: 'p-1', 'com.example/tenant': 'acme' },
    };
    const before = structuredClone(params);
    const result = await instrumented.callTool(params);
    const span = onlySpan();
    const { traceId, spanId } = span.spanContext();
    expect(result.structuredContent).toEqual({
      meta: { progressToken: 'p-1', 'com.example/tenant': 'acme', traceparent: `00-${traceId}-${spanId}-01` },
    });
    expect(params).toStrictEqual(before);
  });

  it('a JSON-RPC error response is a protocol error with its code and message', async () => {
    const failure = await instrumented
      .callTool({ name: 'invalid_date', arguments: {} })
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: -32602 });
    const span = onlySpan();
    expect(span.attributes).toMatchObject({ 'error.type': '-32602', 'rpc.response.status_code': '-32602' });
    expect(span.status).toEqual({ code: 2, message: 'Invalid date' });
    const call = toolCallOf(span);
    expect(call.outcome).toBe('protocol_error');
    expect(classifyToolCall(call)).toMatchObject({ category: 'validation', source: 'code' });
    expect(toolCallSpanId(failure as object)).toBe(span.spanContext().spanId);
  });
});

describe('never throws into the host', () => {
  it('with a tracer that throws, calls go on uninstrumented and return the same results and errors', async () => {
    const { errors } = captureDiag();
    setErrataTracerProvider(brokenTracerProvider());
    try {
      const index = SEED_EXAMPLES.findIndex((e) => e.name.startsWith('business with retriable'));
      const example = SEED_EXAMPLES[index]!;
      expect(
        await instrumented.callTool({ name: example.tool, arguments: { example: index } }),
      ).toStrictEqual(await plain.callTool({ name: example.tool, arguments: { example: index } }));
      await expect(instrumented.callTool({ name: 'invalid_date', arguments: {} })).rejects.toMatchObject({
        code: -32602,
      });
      expect(errors).toHaveLength(2);
      expect(tracing.spans()).toEqual([]);
    } finally {
      setErrataTracerProvider(undefined);
      diag.disable();
    }
  });
});

describe('reconnecting', () => {
  it('a client reconnected to a newer server version reports the new serverInfo', async () => {
    const client = instrumentMcpClient(new Client({ name: 'seed-test', version: '1.0.0' }));
    for (const version of ['1.4.0', '1.5.0']) {
      const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
      const server = seedServer(version);
      await server.connect(serverTransport);
      await client.connect(clientTransport);
      await client.callTool({ name: 'echo_meta', arguments: {} });
      await client.close();
      await server.close();
    }
    expect(tracing.spans().map((span) => span.attributes['errata.server.version'])).toEqual([
      '1.4.0',
      '1.5.0',
    ]);
  });
});

describe('instrumenting twice', () => {
  it('instrumentMcpClient on an instrumented client changes nothing: still one span per call', async () => {
    expect(instrumentMcpClient(instrumented)).toBe(instrumented);
    await instrumented.callTool({ name: 'echo_meta', arguments: {} });
    onlySpan();
  });
});

describe('span times', () => {
  it('back-to-back calls never overlap: each starts after the previous one ended (sub-millisecond clock)', async () => {
    for (let i = 0; i < 200; i++) await instrumented.callTool({ name: 'echo_meta', arguments: {} });
    const spans = tracing.spans();
    expect(spans).toHaveLength(200);
    const nanos = ([seconds, nanoseconds]: [number, number]) =>
      BigInt(seconds) * 1_000_000_000n + BigInt(nanoseconds);
    for (let i = 1; i < spans.length; i++) {
      expect(nanos(spans[i]!.startTime)).toBeGreaterThanOrEqual(nanos(spans[i - 1]!.endTime));
      expect(nanos(spans[i]!.endTime)).toBeGreaterThan(nanos(spans[i]!.startTime));
    }
  });
});

describe('retry hints', () => {
  it('given a failed call, a retry inside withToolCall names it and counts the attempt', async () => {
    const transient = SEED_EXAMPLES.findIndex((e) => e.name.startsWith('lookup_order transient'));
    const first = await instrumented.callTool({ name: 'lookup_order', arguments: { example: transient } });
    await withToolCall({ retryOf: first, toolCallId: 'toolu_01' }, async () => {
      await instrumented.callTool({ name: 'lookup_order', arguments: { example: transient } });
      await instrumented.callTool({ name: 'lookup_order', arguments: { example: transient } });
    });
    const [a, b, c] = tracing.spans();
    expect(b!.attributes).toMatchObject({
      'errata.retry.of': a!.spanContext().spanId,
      'errata.retry.attempt': 2,
      'gen_ai.tool.call.id': 'toolu_01',
    });
    expect(c!.attributes['errata.retry.of']).toBeUndefined();
    expect(toolCallOf(b!).retryHint).toEqual({ of: a!.spanContext().spanId, attempt: 2 });
  });

  it('the tokens a runtime reports for a call reach Errata, which counts them for wasted retries', async () => {
    const transient = SEED_EXAMPLES.findIndex((e) => e.name.startsWith('lookup_order transient'));
    await withToolCall({ inputTokens: 1200, outputTokens: 85 }, () =>
      instrumented.callTool({ name: 'lookup_order', arguments: { example: transient } }),
    );
    await withToolCall({ inputTokens: -1, outputTokens: 2.5 }, () =>
      instrumented.callTool({ name: 'lookup_order', arguments: { example: transient } }),
    );
    const [reported, invalid] = tracing.spans();
    expect(reported!.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 1200,
      'gen_ai.usage.output_tokens': 85,
    });
    expect(toolCallOf(reported!).tokens).toBe(1285);
    expect(invalid!.attributes['gen_ai.usage.input_tokens']).toBeUndefined();
    expect(toolCallOf(invalid!).tokens).toBeNull();
  });
});

describe('every seed example, through a real Errata', () => {
  it('is stored, classified and reported as its seed says: outcome, category, misclassification, report totals', async () => {
    const server = await startTestServer('postgres');
    try {
      const traceIds: string[] = [];
      for (const [index, example] of SEED_EXAMPLES.entries()) {
        await instrumented.callTool({ name: example.tool, arguments: { example: index } });
        traceIds.push(tracing.spans().at(-1)!.spanContext().traceId);
      }
      const exporter = new OTLPTraceExporter({
        url: `${server.url}/v1/traces`,
        headers: { authorization: `Bearer ${server.ingestKey}` },
      });
      await new Promise<void>((resolve, reject) =>
        exporter.export(tracing.spans(), ({ code, error }) => (code === 0 ? resolve() : reject(error))),
      );
      await server.catchUp();
      const read = async <T>(path: string): Promise<T> => {
        const response = await fetch(`${server.url}/api/v1${path}`, {
          headers: { authorization: `Bearer ${server.readKey}` },
        });
        expect(response.status, path).toBe(200);
        return (await response.json()) as T;
      };
      const stored = [];
      for (const traceId of traceIds) {
        const { items } = await read<{
          items: { outcome: string; category: string | null; misclassified: string | null }[];
        }>(`/traces/${traceId}`);
        expect(items, JSON.stringify(items)).toHaveLength(1);
        stored.push(items[0]);
      }
      const misclassified = (example: (typeof SEED_EXAMPLES)[number]) =>
        example.category === 'empty'
          ? 'emptyAsError'
          : example.failureAsEmpty === true
            ? 'failureAsEmpty'
            : null;
      expect(stored).toEqual(
        SEED_EXAMPLES.map((example) => ({
          outcome: example.outcome,
          category: example.category,
          misclassified: misclassified(example),
        })).map((expected) => expect.objectContaining(expected)),
      );
      const { totals } = await read<{ totals: Record<string, number> }>('/reports/misclassified-results');
      expect(totals).toEqual({
        calls: SEED_EXAMPLES.length,
        emptyAsError: SEED_EXAMPLES.filter((e) => misclassified(e) === 'emptyAsError').length,
        failureAsEmpty: SEED_EXAMPLES.filter((e) => misclassified(e) === 'failureAsEmpty').length,
      });
      const failures = SEED_EXAMPLES.filter((e) => e.outcome === 'tool_error');
      const escalations = await read<{ byCategory: { category: string; failures: number }[] }>(
        '/reports/escalations',
      );
      expect(Object.fromEntries(escalations.byCategory.map((row) => [row.category, row.failures]))).toEqual(
        Object.fromEntries(
          escalations.byCategory.map((row) => [
            row.category,
            failures.filter((e) => e.category === row.category).length,
          ]),
        ),
      );
    } finally {
      await server.close();
    }
  });
});
