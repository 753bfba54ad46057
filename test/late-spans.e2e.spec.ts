/**
 * Late telemetry re-derives the trace it belongs to. A tool call nested under a plain span (not an Errata event)
 * belongs to no agent run until that span arrives; when it does, in a request of its own that holds no event,
 * the projector reads it from the span-edge log and the call moves into the agent's run. A span re-sent with
 * another start time (a misbehaving exporter) is counted once and does not stop the projector. The MCP server's
 * Sentry span of a call, arriving after the agent's client span, is that call seen again, not a second one.
 */
import { context, SpanKind, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sendSpans, startTestServer, type TestServer } from './support/server';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('postgres');
});
afterAll(() => server?.close());

const T0 = Date.UTC(2026, 10, 30, 8);
const memory = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'late-agent' }),
  spanProcessors: [new SimpleSpanProcessor(memory)],
}).getTracer('late');

/** An agent run → a plain `plan step` span → a failed tool call, and an escalation in the agent run. */
function nestedTrace(): {
  agent: ReadableSpan;
  step: ReadableSpan;
  call: ReadableSpan;
  escalation: ReadableSpan;
} {
  memory.reset();
  const agent = tracer.startSpan('invoke_agent planner', {
    kind: SpanKind.INTERNAL,
    startTime: T0,
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner' },
  });
  const inAgent = trace.setSpan(context.active(), agent);
  const step = tracer.startSpan('plan step', { startTime: T0 + 5 }, inAgent);
  tracer
    .startSpan(
      'tools/call search_orders',
      {
        kind: SpanKind.CLIENT,
        startTime: T0 + 10,
        attributes: {
          'mcp.method.name': 'tools/call',
          'gen_ai.tool.name': 'search_orders',
          'errata.server.name': 'orders',
          'errata.result.is_error': true,
          'error.type': 'tool_error',
          'errata.result.text': '{"errorCategory":"transient","isRetryable":true}',
        },
      },
      trace.setSpan(inAgent, step),
    )
    .end(T0 + 30);
  step.end(T0 + 40);
  tracer
    .startSpan(
      'errata.escalation',
      { startTime: T0 + 50, attributes: { 'errata.escalation.target': 'human' } },
      inAgent,
    )
    .end(T0 + 50);
  agent.end(T0 + 60);
  const [call, stepSpan, escalation, agentSpan] = memory.getFinishedSpans();
  return { agent: agentSpan!, step: stepSpan!, call: call!, escalation: escalation! };
}

async function deliver(spans: ReadableSpan[]): Promise<void> {
  expect(await sendSpans(server.url, server.ingestKey, spans)).toBe(200);
  await server.catchUp();
}

async function report(path: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.url}/api/v1/${path}`, {
    headers: { authorization: `Bearer ${server.readKey}` },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

it('given a call under a plain span that arrives last, the call joins the agent run when the span arrives', async () => {
  const { agent, step, call, escalation } = nestedTrace();
  await deliver([call, escalation, agent]);
  // The call's parent is unknown: its run is the trace, not the planner's, so the escalation has no failure.
  expect((await report('reports/retry-waste?agent=planner'))['totals']).toMatchObject({ calls: 0 });
  expect((await report('reports/escalations'))['totals']).toMatchObject({ escalations: 1, attributed: 0 });

  await deliver([step]); // a request with no event at all: only the span's place in the trace
  expect((await report('reports/retry-waste?agent=planner'))['totals']).toMatchObject({ calls: 1 });
  expect((await report('reports/escalations'))['totals']).toMatchObject({ escalations: 1, attributed: 1 });
});

it('given a span re-sent with another start time, it counts once and the projector goes on', async () => {
  const { agent, step, call, escalation } = nestedTrace();
  const shifted = Object.assign(
    Object.create(Object.getPrototypeOf(escalation) as object) as ReadableSpan,
    escalation,
    {
      startTime: [escalation.startTime[0], escalation.startTime[1] + 1_000] as [number, number],
    },
  );
  await deliver([agent, step, call, escalation]);
  await deliver([shifted]);
  const escalations = (await report('reports/escalations?agent=planner'))['totals'];
  expect(escalations).toMatchObject({ escalations: 2, attributed: 2 }); // this trace's one, and the first test's
});

it('given the MCP server’s Sentry span of a call, a child of the agent’s client span arriving in a later request, the call counts once and its retry links the client calls', async () => {
  memory.reset();
  const turn = tracer.startSpan('agent turn', { startTime: T0 });
  const inTurn = trace.setSpan(context.active(), turn);
  const clientCall = (startMs: number) => {
    const span = tracer.startSpan(
      'tools/call open_nodes',
      {
        kind: SpanKind.CLIENT,
        startTime: T0 + startMs,
        attributes: {
          'mcp.method.name': 'tools/call',
          'gen_ai.tool.name': 'open_nodes',
          'errata.server.name': 'sentried',
          'errata.args.hash': 'a1b2c3d4a1b2c3d4a1b2c3d4a1b2c3d4',
          'error.type': '-32602',
          'rpc.response.status_code': '-32602',
        },
      },
      inTurn,
    );
    // Sentry's wrapMcpServerWithSentry continues the trace from `_meta.traceparent`: its span is the client's child.
    tracer
      .startSpan(
        'tools/call open_nodes',
        {
          startTime: T0 + startMs + 1,
          attributes: {
            'mcp.method.name': 'tools/call',
            'mcp.tool.name': 'open_nodes',
            'mcp.server.name': 'sentried',
            'mcp.request.argument.names': '7',
            'sentry.origin': 'auto.function.mcp_server',
          },
        },
        trace.setSpan(context.active(), span),
      )
      .setStatus({ code: 2, message: 'internal_error' })
      .end(T0 + startMs + 9);
    span.setStatus({ code: 2, message: 'MCP error -32602: Invalid params' });
    span.end(T0 + startMs + 10);
  };
  clientCall(0);
  clientCall(100);
  turn.end(T0 + 200);
  const [serverA, clientA, serverB, clientB, turnSpan] = memory.getFinishedSpans();
  await deliver([clientA!, clientB!, turnSpan!]);
  await deliver([serverA!, serverB!]); // the server's exporter, in a request of its own

  const servers = (await report('servers'))['servers'] as { server: string; calls: number }[];
  expect(servers.find((s) => s.server === 'sentried')).toMatchObject({ calls: 2 });
  const retries = (await report('reports/retry-waste?groupBy=category&server=sentried'))['groups'];
  expect(retries).toMatchObject([{ key: 'validation', retries: 1, reasons: { blind_retry: 1 } }]);
});
