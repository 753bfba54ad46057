import { diag, SpanStatusCode, trace } from '@opentelemetry/api';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { toolCallSpanId, withToolCall } from './tool-call-hints';
import { ToolCallTracer } from './tool-call-tracer';
import { captureDiag, registerTestTracing, type TestTracing } from './tracing.spec-helper';

let tracing: TestTracing;
beforeAll(() => {
  tracing = registerTestTracing();
});
afterEach(() => {
  tracing.reset();
  diag.disable();
});

it('when reading a result throws, the error goes to diag, the span still ends and the host gets its result', async () => {
  const { errors } = captureDiag();
  const hostile = {
    get content(): unknown {
      throw new Error('a getter that throws');
    },
  };
  const client = { callTool: async () => hostile };
  const callTool = new ToolCallTracer(
    () => trace.getTracer('test'),
    () => ({}),
  ).wrapCallTool(client.callTool);
  expect(await callTool.call(client, { name: 'lookup', arguments: {} })).toBe(hostile);
  const [span] = tracing.spans();
  expect(span?.name).toBe('tools/call lookup');
  expect(span?.ended).toBe(true);
  expect(errors).toHaveLength(1);
});

const tracedCallTool = (callTool: () => Promise<unknown>) => {
  const client = { callTool };
  const wrapped = new ToolCallTracer(
    () => trace.getTracer('test'),
    () => ({}),
  ).wrapCallTool(client.callTool);
  return () => wrapped.call(client, { name: 'lookup', arguments: {} });
};

it('when reading an isError result throws, the span still records a failed tool call', async () => {
  captureDiag();
  const hostile = {
    isError: true,
    get content(): unknown {
      throw new Error('a getter that throws');
    },
  };
  expect(await tracedCallTool(async () => hostile)()).toBe(hostile);
  const [span] = tracing.spans();
  expect(span?.status.code).toBe(SpanStatusCode.ERROR);
  expect(span?.attributes['error.type']).toBe('tool_error');
});

it('when reading a thrown error throws, the span still records the call as failed and the host gets its error', async () => {
  captureDiag();
  const hostile = {
    get message(): string {
      throw new Error('a getter that throws');
    },
  };
  await expect(tracedCallTool(() => Promise.reject(hostile))()).rejects.toBe(hostile);
  const [span] = tracing.spans();
  expect(span?.ended).toBe(true);
  expect(span?.status.code).toBe(SpanStatusCode.ERROR);
});

it('an async responseHook that rejects goes to diag, not to the host as an unhandled rejection', async () => {
  const { errors } = captureDiag();
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const client = { callTool: async () => ({ content: [] }) };
    const callTool = new ToolCallTracer(
      () => trace.getTracer('test'),
      () => ({ responseHook: async () => Promise.reject(new Error('hook failed')) }),
    ).wrapCallTool(client.callTool);
    await callTool.call(client, { name: 'lookup', arguments: {} });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(unhandled).toEqual([]);
    expect(errors.map(([message]) => message)).toEqual(['@errata/sdk: responseHook failed']);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

it('the responseHook gets the tool name with the result, or with the error, of the call its span is for', async () => {
  const hooked: unknown[] = [];
  const result = { content: [] };
  const failure = new Error('refused');
  const client = {
    callTool: async (params: { name: string }) => (params.name === 'ok' ? result : Promise.reject(failure)),
  };
  const callTool = new ToolCallTracer(
    () => trace.getTracer('test'),
    () => ({ responseHook: (span, info) => hooked.push([span.spanContext().spanId, info]) }),
  ).wrapCallTool(client.callTool as (this: object, ...args: unknown[]) => unknown);
  await callTool.call(client, { name: 'ok', arguments: {} });
  await expect(callTool.call(client, { name: 'refuse', arguments: {} })).rejects.toBe(failure);
  const [ok, refused] = tracing.spans();
  expect(hooked).toEqual([
    [ok?.spanContext().spanId, { toolName: 'ok', result }],
    [refused?.spanContext().spanId, { toolName: 'refuse', error: failure }],
  ]);
  expect((hooked[0] as [string, object])[1]).not.toHaveProperty('error');
  expect((hooked[1] as [string, object])[1]).not.toHaveProperty('result');
});

it('an error several calls rejected with (a closed connection) names none of them', async () => {
  const { warnings } = captureDiag();
  const closed = new Error('Connection closed');
  const failing = tracedCallTool(() => Promise.reject(closed));
  await Promise.allSettled([failing(), failing()]);
  expect(toolCallSpanId(closed)).toBeUndefined();
  const retried = tracedCallTool(async () => ({ content: [] }));
  await withToolCall({ retryOf: closed }, retried);
  const spans = tracing.spans();
  expect(spans).toHaveLength(3);
  expect(spans[2]?.attributes['errata.retry.of']).toBeUndefined();
  expect(warnings.map(([message]) => message)).toContain(
    '@errata/sdk: retryOf was the outcome of several calls (a closed connection); hint ignored',
  );
});

it('an error one call rejected with names that call', async () => {
  captureDiag();
  const refused = new Error('connect ECONNREFUSED');
  await tracedCallTool(() => Promise.reject(refused))().catch(() => undefined);
  const [span] = tracing.spans();
  expect(toolCallSpanId(refused)).toBe(span?.spanContext().spanId);
});

it('params with an own __proto__ key (parsed from JSON) are sent with that key, beside the trace context', async () => {
  const sent: unknown[] = [];
  const client = {
    callTool: async (params: unknown) => {
      sent.push(params);
      return { content: [] };
    },
  };
  const callTool = new ToolCallTracer(
    () => trace.getTracer('test'),
    () => ({}),
  ).wrapCallTool(client.callTool);
  const params = JSON.parse(
    '{"name":"lookup","arguments":{},"__proto__":{"x":1},"_meta":{"__proto__":{"y":2}}}',
  );
  await callTool.call(client, params);
  const { traceId, spanId } = tracing.spans()[0]!.spanContext();
  const traceparent = `00-${traceId}-${spanId}-01`;
  expect(JSON.stringify(sent[0])).toBe(
    `{"name":"lookup","arguments":{},"__proto__":{"x":1},"_meta":{"__proto__":{"y":2},"traceparent":"${traceparent}"}}`,
  );
  expect(Object.getPrototypeOf(sent[0])).toBe(Object.prototype);
});

it('retryOf as a span id names the call without an attempt; of another type it is ignored, with a warning', async () => {
  const { warnings } = captureDiag();
  const call = tracedCallTool(async () => ({ content: [] }));
  await call();
  const first = tracing.spans()[0]!.spanContext().spanId;
  await withToolCall({ retryOf: first }, call);
  await withToolCall({ retryOf: 42 }, call);
  const [, byId, byNumber] = tracing.spans();
  expect(byId?.attributes['errata.retry.of']).toBe(first);
  expect(byId?.attributes['errata.retry.attempt']).toBeUndefined();
  expect(byNumber?.attributes['errata.retry.of']).toBeUndefined();
  expect(warnings.map(([message]) => message)).toEqual([
    '@errata/sdk: retryOf is a number, not a span id, result or error; hint ignored',
  ]);
});

it('a tracestate the host put in _meta goes with its traceparent, which the span’s replaces', async () => {
  const sent: { _meta?: Record<string, unknown> }[] = [];
  const client = {
    callTool: async (params: { _meta?: Record<string, unknown> }) => {
      sent.push(params);
      return { content: [] };
    },
  };
  const callTool = new ToolCallTracer(
    () => trace.getTracer('test'),
    () => ({}),
  ).wrapCallTool(client.callTool as never);
  const stale = { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`, tracestate: 'vendor=stale' };
  await callTool.call(client, { name: 'lookup', arguments: {}, _meta: { ...stale, progressToken: 3 } });
  const { traceId, spanId } = tracing.spans()[0]!.spanContext();
  expect(sent[0]?._meta).toEqual({ traceparent: `00-${traceId}-${spanId}-01`, progressToken: 3 });
});
