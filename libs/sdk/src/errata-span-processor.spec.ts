import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, diag, DiagLogLevel, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { withAgentRun } from './agent';
import { ErrataSpanProcessor } from './errata-span-processor';
import { captureDiag, registerTestTracing } from './tracing.spec-helper';

const TOOL_CALL_ATTRIBUTES = {
  'mcp.method.name': 'tools/call',
  'gen_ai.operation.name': 'execute_tool',
  'gen_ai.tool.name': 'lookup_order',
  'errata.args.hash': '00112233445566778899aabbccddeeff',
};

/** A real OTLP/HTTP receiver that answers when told to, with a status of the test's choice. */
class Receiver {
  private server: Server | undefined;
  private held: ServerResponse[] = [];
  received = 0;
  hold = false;
  status = 200;
  /** Answers this long after a request arrived. */
  delayMs = 0;

  async start(): Promise<string> {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        this.received++;
        const answer = () => res.writeHead(this.status, { 'content-type': 'application/x-protobuf' }).end();
        if (this.hold) this.held.push(res);
        else if (this.delayMs > 0) setTimeout(answer, this.delayMs);
        else answer();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/traces`;
  }

  release(): void {
    this.hold = false;
    for (const res of this.held.splice(0))
      res.writeHead(this.status, { 'content-type': 'application/x-protobuf' }).end();
  }

  async stop(): Promise<void> {
    this.release();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

const exporter = new InMemorySpanExporter();
const processor = new ErrataSpanProcessor({ exporter, scheduledDelayMillis: 10 });
let tracing: ReturnType<typeof registerTestTracing>;

beforeAll(() => {
  tracing = registerTestTracing([processor]);
});

afterEach(() => exporter.reset());

const tracer = () => tracing.provider.getTracer('test');

describe('ErrataSpanProcessor: what is sent', () => {
  it('given an agent run → an HTTP span → a tool call, when exported, then the HTTP span is dropped and the tool call hangs off the run', async () => {
    const agent = tracer().startSpan('invoke_agent support', {
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support' },
    });
    const inAgent = trace.setSpan(context.active(), agent);
    const http = tracer().startSpan('POST /orders', { kind: SpanKind.CLIENT }, inAgent);
    const inHttp = trace.setSpan(inAgent, http);
    const call = tracer().startSpan(
      'tools/call lookup_order',
      { kind: SpanKind.CLIENT, attributes: TOOL_CALL_ATTRIBUTES },
      inHttp,
    );
    call.end();
    http.end();
    agent.end();
    await processor.forceFlush();

    const sent = exporter.getFinishedSpans();
    expect(sent.map((s) => s.name)).toEqual(['tools/call lookup_order', 'invoke_agent support']);
    expect(sent[0]!.parentSpanContext?.spanId).toBe(agent.spanContext().spanId);
    expect(sent[1]!.parentSpanContext).toBeUndefined();
  });

  it('escalations and subagent reports are sent; plain spans are not', async () => {
    const before = processor.stats().filtered;
    tracer()
      .startSpan('errata.escalation', { attributes: { 'errata.escalation.target': 'human' } })
      .end();
    tracer()
      .startSpan('errata.subagent_report', { attributes: { 'errata.subagent.status': 'partial' } })
      .end();
    tracer().startSpan('SELECT orders').end();
    await processor.forceFlush();
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual([
      'errata.escalation',
      'errata.subagent_report',
    ]);
    expect(processor.stats().filtered).toBe(before + 1);
  });

  it('a filtered span under a remote parent passes the remote parent on (a subagent in another process)', async () => {
    const remote = trace.setSpanContext(context.active(), {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    const server = tracer().startSpan('POST /subagent', { kind: SpanKind.SERVER }, remote);
    tracer()
      .startSpan(
        'tools/call lookup_order',
        { kind: SpanKind.CLIENT, attributes: TOOL_CALL_ATTRIBUTES },
        trace.setSpan(remote, server),
      )
      .end();
    server.end();
    await processor.forceFlush();
    const [call] = exporter.getFinishedSpans();
    expect(call!.parentSpanContext).toMatchObject({ spanId: '00f067aa0ba902b7', isRemote: true });
  });
});

describe('ErrataSpanProcessor: parents it does not keep or cannot see', () => {
  const toolCall = (parent = context.active()) =>
    tracer().startSpan(
      'tools/call lookup_order',
      { kind: SpanKind.CLIENT, attributes: TOOL_CALL_ATTRIBUTES },
      parent,
    );

  it('given a span that becomes a tool call only when it ends (Traceloop sets its kind late), it is sent under the nearest kept ancestor', async () => {
    const agent = tracer().startSpan('invoke_agent support', {
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support' },
    });
    const inAgent = trace.setSpan(context.active(), agent);
    const session = tracer().startSpan('mcp.client.session', {}, inAgent);
    const tool = tracer().startSpan('lookup_order.tool', {}, trace.setSpan(inAgent, session));
    tool.setAttributes({ 'traceloop.span.kind': 'tool', 'traceloop.entity.name': 'lookup_order' });
    tool.end();
    session.end();
    agent.end();
    await processor.forceFlush();

    const sent = exporter.getFinishedSpans();
    expect(sent.map((s) => s.name)).toEqual(['lookup_order.tool', 'invoke_agent support']);
    expect(sent[0]!.parentSpanContext?.spanId).toBe(agent.spanContext().spanId);
  });

  it("given a parent span of the host's own provider, which this processor never sees, the call hangs off the innermost agent run", async () => {
    const hostTracer = new BasicTracerProvider().getTracer('host');
    const runSpanId = await withAgentRun({ name: 'support' }, async (run) => {
      const step = hostTracer.startSpan('plan step');
      toolCall(trace.setSpan(context.active(), step)).end();
      step.end();
      return run.spanId;
    });
    await processor.forceFlush();
    const [call] = exporter.getFinishedSpans();
    expect(call!.name).toBe('tools/call lookup_order');
    expect(call!.parentSpanContext?.spanId).toBe(runSpanId);
  });

  it('given a call started after its filtered parent ended, the call hangs off the innermost agent run', async () => {
    const runSpanId = await withAgentRun({ name: 'support' }, async (run) => {
      const http = tracer().startSpan('POST /plan');
      const inHttp = trace.setSpan(context.active(), http);
      http.end();
      toolCall(inHttp).end();
      return run.spanId;
    });
    await processor.forceFlush();
    const [call] = exporter.getFinishedSpans();
    expect(call!.parentSpanContext?.spanId).toBe(runSpanId);
  });

  it('given a parent it cannot see in another trace than the agent run, the parent is left as it is', async () => {
    const hostTracer = new BasicTracerProvider().getTracer('host');
    const stepSpanId = await withAgentRun({ name: 'support' }, async () => {
      const step = hostTracer.startSpan('new host trace', { root: true });
      toolCall(trace.setSpan(context.active(), step)).end();
      step.end();
      return step.spanContext().spanId;
    });
    await processor.forceFlush();
    const [call] = exporter.getFinishedSpans();
    expect(call!.parentSpanContext?.spanId).toBe(stepSpanId);
  });

  it('given another instrumentation’s tool-call span inside a call Errata records itself, only Errata’s is sent', async () => {
    const own = toolCall();
    tracer()
      .startSpan(
        'tools/call lookup_order',
        {
          kind: SpanKind.CLIENT,
          attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'lookup_order' },
        },
        trace.setSpan(context.active(), own),
      )
      .end();
    own.end();
    await processor.forceFlush();
    const sent = exporter.getFinishedSpans();
    expect(sent.map((span) => span.spanContext().spanId)).toEqual([own.spanContext().spanId]);
  });

  it('given no agent run in the context, a parent it cannot see is left as it is', async () => {
    const step = new BasicTracerProvider().getTracer('host').startSpan('plan step');
    toolCall(trace.setSpan(context.active(), step)).end();
    step.end();
    await processor.forceFlush();
    const [call] = exporter.getFinishedSpans();
    expect(call!.parentSpanContext?.spanId).toBe(step.spanContext().spanId);
  });
});

describe('ErrataSpanProcessor: bounded memory, real OTLP exporter', () => {
  const receiver = new Receiver();
  let url: string;

  beforeAll(async () => {
    url = await receiver.start();
    return () => receiver.stop();
  });

  const toolCalls = (bounded: ErrataSpanProcessor, count: number) => {
    const boundedTracer = new BasicTracerProvider({ spanProcessors: [bounded] }).getTracer('bounded');
    for (let i = 0; i < count; i++) {
      boundedTracer
        .startSpan(`tools/call t${i}`, { kind: SpanKind.CLIENT, attributes: TOOL_CALL_ATTRIBUTES })
        .end();
    }
  };

  it('given a receiver that does not answer, spans beyond the queue limit are dropped and counted, and the rest arrive later', async () => {
    const bounded = new ErrataSpanProcessor({
      exporter: new OTLPTraceExporter({ url }),
      maxQueueSize: 4,
      maxExportBatchSize: 2,
      scheduledDelayMillis: 10,
    });
    receiver.hold = true;
    const sentBefore = receiver.received;
    toolCalls(bounded, 10);
    expect(bounded.stats()).toMatchObject({ queued: 4, dropped: 6 });
    const flushed = bounded.forceFlush();
    await new Promise((resolve) => setTimeout(resolve, 100));
    receiver.release();
    await flushed;
    expect(bounded.stats()).toMatchObject({ queued: 0, exported: 4, dropped: 6, failed: 0 });
    expect(receiver.received - sentBefore).toBe(2);
    await bounded.shutdown();
  });

  it('a rejected export is counted as failed; after shutdown spans are dropped', async () => {
    receiver.status = 400;
    const bounded = new ErrataSpanProcessor({
      exporter: new OTLPTraceExporter({ url }),
      scheduledDelayMillis: 10,
    });
    toolCalls(bounded, 3);
    await bounded.forceFlush();
    expect(bounded.stats()).toMatchObject({ exported: 0, failed: 3 });
    receiver.status = 200;
    await bounded.shutdown();
    toolCalls(bounded, 1);
    expect(bounded.stats().dropped).toBe(1);
  });
});

describe('ErrataSpanProcessor: shutdown when Errata does not answer, real OTLP exporter', () => {
  const receiver = new Receiver();
  let url: string;

  beforeAll(async () => {
    url = await receiver.start();
    return () => receiver.stop();
  });

  it('sends the remaining batches together and returns after exportTimeoutMillis, with requests still open', async () => {
    receiver.hold = true;
    const sentBefore = receiver.received;
    const stopping = new ErrataSpanProcessor({
      // The exporter would wait 60 s for each request; the processor gives each export, and shutdown, 1 s.
      exporter: new OTLPTraceExporter({ url, timeoutMillis: 60_000 }),
      maxExportBatchSize: 10,
      scheduledDelayMillis: 60_000,
      exportTimeoutMillis: 1000,
    });
    toolCallsInto(stopping, 35);
    // The first full batch went out on its own; 25 spans wait behind it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.received - sentBefore).toBe(1);

    const stopped = stopping.shutdown();
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The other three batches went out at once, long before the first export times out.
      expect(receiver.received - sentBefore).toBe(4);
      // Shutdown returns although no request was answered and the exporter would wait for them.
      await stopped;
      expect(stopping.stats()).toMatchObject({ queued: 0, exported: 0, failed: 35, dropped: 0 });
    } finally {
      receiver.release();
    }
  });

  it('drops (and counts) what is still queued when exportTimeoutMillis has passed', async () => {
    receiver.hold = true;
    const stopping = new ErrataSpanProcessor({
      exporter: new OTLPTraceExporter({ url, timeoutMillis: 60_000 }),
      maxExportBatchSize: 10,
      scheduledDelayMillis: 60_000,
      maxQueueSize: 1000,
      exportTimeoutMillis: 300,
    });
    try {
      toolCallsInto(stopping, 100);
      await stopping.shutdown();
      // Four batches went out at once and timed out at the deadline (a drain whose timer fired a hair early may
      // start one more, which fails at once); what was still queued was dropped. Every span is counted.
      const { queued, exported, failed, dropped } = stopping.stats();
      expect({ queued, exported }).toEqual({ queued: 0, exported: 0 });
      expect(failed).toBeGreaterThanOrEqual(40);
      expect(dropped).toBeGreaterThan(0);
      expect(failed + dropped).toBe(100);
    } finally {
      receiver.release();
    }
  });

  it('sends many batches a few at a time, so that the exporter does not refuse any', async () => {
    receiver.delayMs = 20;
    const stopping = new ErrataSpanProcessor({
      exporter: new OTLPTraceExporter({ url }),
      maxExportBatchSize: 10,
      scheduledDelayMillis: 60_000,
      maxQueueSize: 1000,
    });
    try {
      toolCallsInto(stopping, 1000);
      await stopping.shutdown();
      expect(stopping.stats()).toMatchObject({ queued: 0, exported: 1000, failed: 0, dropped: 0 });
    } finally {
      receiver.delayMs = 0;
    }
  });

  it('an exporter whose shutdown returns nothing does not make shutdown throw', async () => {
    const exporter = new InMemorySpanExporter();
    exporter.shutdown = (() => undefined) as never;
    const stopping = new ErrataSpanProcessor({ exporter, scheduledDelayMillis: 60_000 });
    toolCallsInto(stopping, 3);
    await expect(stopping.shutdown()).resolves.toBeUndefined();
    expect(exporter.getFinishedSpans()).toHaveLength(3);
  });
});

/** An exporter that answers each export after `delayMs`, with success or failure, and counts the batches. */
function countingExporter(delayMs: number, ok = true) {
  const batches: number[] = [];
  const exporter = new InMemorySpanExporter();
  exporter.export = (spans, done) => {
    batches.push(spans.length);
    setTimeout(() => done({ code: ok ? 0 : 1, error: ok ? undefined : new Error('refused') }), delayMs);
  };
  return { exporter, batches };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ErrataSpanProcessor: steady load, failures, repeated calls', () => {
  it('under a steady stream of spans, flushes send what was queued and full batches, not batches of a few', async () => {
    const { exporter, batches } = countingExporter(20);
    const steady = new ErrataSpanProcessor({ exporter, scheduledDelayMillis: 100, maxExportBatchSize: 200 });
    for (let tick = 0; tick < 150; tick++) {
      toolCallsInto(steady, 2); // about 500 spans a second
      await pause(2);
    }
    await steady.forceFlush();
    const spans = batches.reduce((sum, n) => sum + n, 0);
    expect(spans).toBe(300);
    // The flush loop used to chase every span that ended while it exported: batches of what one export's time let in.
    expect(spans / batches.length).toBeGreaterThan(25);
    await steady.shutdown();
  });

  it('a failed export ends the flush: the next batches wait for the timer, not for one timeout after another', async () => {
    const { exporter, batches } = countingExporter(1, false);
    const failing = new ErrataSpanProcessor({
      exporter,
      scheduledDelayMillis: 60_000,
      maxExportBatchSize: 10,
    });
    toolCallsInto(failing, 9);
    await failing.forceFlush();
    toolCallsInto(failing, 31); // a full batch goes out by itself, and fails
    await failing.forceFlush();
    expect(batches).toEqual([9, 10, 10]);
    expect(failing.stats()).toMatchObject({ queued: 11, failed: 29, exporting: 0 });
  });

  it('counts the spans of an export not answered yet; a second shutdown, and a flush meanwhile, wait for the first', async () => {
    const { exporter } = countingExporter(200);
    const stopping = new ErrataSpanProcessor({ exporter, scheduledDelayMillis: 60_000 });
    toolCallsInto(stopping, 100);
    const first = stopping.shutdown();
    await pause(20);
    expect(stopping.stats()).toMatchObject({ queued: 0, exporting: 100, exported: 0 });
    const second = stopping.shutdown();
    const flush = stopping.forceFlush();
    let done = 0;
    void second.then(() => done++);
    void flush.then(() => done++);
    await pause(50);
    expect(done).toBe(0);
    await Promise.all([first, second, flush]);
    expect(stopping.stats()).toMatchObject({ queued: 0, exporting: 0, exported: 100 });
  });

  it("waits for the resource's asynchronous attributes (a host NodeSDK's detectors) before exporting", async () => {
    let hostId: (id: string) => void = () => undefined;
    const resource = resourceFromAttributes({
      'host.id': new Promise<string>((resolve) => (hostId = resolve)),
    });
    const seenAtExport: unknown[] = [];
    const waiting = new ErrataSpanProcessor({
      exporter: {
        export: (spans, done) => {
          for (const span of spans) seenAtExport.push(span.resource.attributes['host.id']);
          done({ code: ExportResultCode.SUCCESS });
        },
        shutdown: () => Promise.resolve(),
      },
    });
    const provider = new BasicTracerProvider({ resource, spanProcessors: [waiting] });
    provider
      .getTracer('test')
      .startSpan('errata.escalation', { attributes: { 'errata.escalation.target': 'human' } })
      .end();
    const flushed = waiting.forceFlush();
    setTimeout(() => hostId('host-1'), 20);
    await flushed;
    expect(seenAtExport).toEqual(['host-1']);
    await provider.shutdown();
  });

  it('a flush behind an export in flight returns within one export timeout; what it could not send stays queued', async () => {
    const { exporter, batches } = countingExporter(10_000);
    const slow = new ErrataSpanProcessor({
      exporter,
      scheduledDelayMillis: 60_000,
      maxExportBatchSize: 10,
      exportTimeoutMillis: 1000,
    });
    toolCallsInto(slow, 10); // a full batch: in flight, unanswered
    toolCallsInto(slow, 5);
    const started = Date.now();
    await slow.forceFlush();
    const took = Date.now() - started;
    // The export in flight times out at 1 s, the flush's deadline: its own batch would have taken 1 s more.
    expect(took).toBeGreaterThanOrEqual(990);
    expect(took).toBeLessThan(1700);
    expect(batches).toEqual([10]);
    await pause(50); // the export in flight timed out by the flush's deadline, give or take a timer's turn
    expect(slow.stats()).toMatchObject({ failed: 10, queued: 5 });
  });

  it('what a flush could not send by its deadline goes out on the timer, with no new span to set it', async () => {
    const batches: number[] = [];
    const exporter = new InMemorySpanExporter();
    exporter.export = (spans, done) => {
      batches.push(spans.length);
      if (batches.length > 1) done({ code: ExportResultCode.SUCCESS }); // the first never answers
    };
    const stalled = new ErrataSpanProcessor({
      exporter,
      scheduledDelayMillis: 100,
      maxExportBatchSize: 10,
      exportTimeoutMillis: 300,
    });
    toolCallsInto(stalled, 15); // a full batch goes out and hangs; 5 wait behind it
    await stalled.forceFlush();
    expect(stalled.stats()).toMatchObject({ queued: 5 });
    await pause(600);
    expect(batches).toEqual([10, 5]);
    expect(stalled.stats()).toMatchObject({ queued: 0, failed: 10, exported: 5 });
  });

  it('a run of failed exports is one error in the log, recovery one info line; each failure after the first is a debug line', async () => {
    const logged = { error: [] as string[], info: [] as string[], debug: [] as string[] };
    diag.setLogger(
      {
        error: (message: string) => logged.error.push(message),
        warn: () => undefined,
        info: (message: string) => logged.info.push(message),
        debug: (message: string) => logged.debug.push(message),
        verbose: () => undefined,
      },
      DiagLogLevel.ALL,
    );
    let ok = false;
    const exporter = new InMemorySpanExporter();
    exporter.export = (spans, done) =>
      done({ code: ok ? ExportResultCode.SUCCESS : ExportResultCode.FAILED, error: new Error('401') });
    const flaky = new ErrataSpanProcessor({ exporter, scheduledDelayMillis: 60_000 });
    try {
      for (let i = 0; i < 3; i++) {
        toolCallsInto(flaky, 2);
        await flaky.forceFlush();
      }
      ok = true;
      toolCallsInto(flaky, 1);
      await flaky.forceFlush();
      ok = false;
      toolCallsInto(flaky, 1);
      await flaky.forceFlush();
    } finally {
      diag.disable();
    }
    expect(logged.error).toEqual([
      '@errata/sdk: export of 2 spans failed; further failures are logged at debug level until an export succeeds',
      '@errata/sdk: export of 1 spans failed; further failures are logged at debug level until an export succeeds',
    ]);
    expect(logged.info).toEqual(['@errata/sdk: exports succeed again, after 6 spans failed']);
    expect(logged.debug.filter((line) => line.includes('failed'))).toHaveLength(2);
  });

  it('a host diag logger that throws does not stop the exports', async () => {
    const { exporter, batches } = countingExporter(1, false);
    const failing = new ErrataSpanProcessor({
      exporter,
      scheduledDelayMillis: 60_000,
      maxExportBatchSize: 10,
    });
    diag.setLogger({
      error: () => {
        throw new Error('logger down');
      },
      warn: () => {
        throw new Error('logger down');
      },
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    });
    try {
      toolCallsInto(failing, 10);
      await failing.forceFlush();
      toolCallsInto(failing, 10);
      await failing.forceFlush();
      expect(batches).toEqual([10, 10]);
      expect(failing.stats()).toMatchObject({ queued: 0, failed: 20 });
    } finally {
      diag.disable();
    }
  });
});

function toolCallsInto(processor: ErrataSpanProcessor, count: number): void {
  const tracer = new BasicTracerProvider({ spanProcessors: [processor] }).getTracer('tool-calls');
  for (let i = 0; i < count; i++) {
    tracer.startSpan(`tools/call t${i}`, { kind: SpanKind.CLIENT, attributes: TOOL_CALL_ATTRIBUTES }).end();
  }
}

describe('ErrataSpanProcessor: options a host got wrong', () => {
  it('a batch size under 1 (0.5) is the default: no empty batch is ever sent, and the span goes out', async () => {
    const { exporter, batches } = countingExporter(1);
    const halves = new ErrataSpanProcessor({ exporter, maxExportBatchSize: 0.5, exportTimeoutMillis: 500 });
    toolCallsInto(halves, 1);
    await halves.forceFlush();
    await halves.shutdown();
    // Rounded down to 0, it sent empty batches in a loop until the flush timed out, and never the span.
    expect(batches).toEqual([1]);
    expect(halves.stats()).toMatchObject({ exported: 1, dropped: 0, failed: 0 });
  });

  it('a queue size or export timeout under 1 (0.5) is the default: spans are neither dropped nor timed out', async () => {
    const { exporter, batches } = countingExporter(5);
    const halves = new ErrataSpanProcessor({ exporter, maxQueueSize: 0.5, exportTimeoutMillis: 0.5 });
    toolCallsInto(halves, 3);
    await halves.forceFlush();
    expect(batches).toEqual([3]);
    expect(halves.stats()).toMatchObject({ exported: 3, dropped: 0, failed: 0 });
    await halves.shutdown();
  });

  it('each wrong option is one diag warning naming it, the value and what is used instead, not one per span', async () => {
    const { warnings } = captureDiag();
    try {
      const { exporter } = countingExporter(1);
      const wrong = new ErrataSpanProcessor({
        exporter,
        maxQueueSize: -1,
        maxExportBatchSize: 'abc' as never,
        scheduledDelayMillis: 'x' as never,
        exportTimeoutMillis: 0.5,
      });
      toolCallsInto(wrong, 5);
      await wrong.forceFlush();
      await wrong.shutdown();
      expect(warnings.map((w) => w[0])).toEqual([
        '@errata/sdk: maxQueueSize must be a number of at least 1; got -1; 2048 is used instead',
        '@errata/sdk: maxExportBatchSize must be a number of at least 1; got "abc"; 512 is used instead',
        '@errata/sdk: scheduledDelayMillis must be a number of at least 1; got "x"; 1000 is used instead',
        '@errata/sdk: exportTimeoutMillis must be a number of at least 1; got 0.5; 30000 is used instead',
      ]);
    } finally {
      diag.disable();
    }
  });
});
