import { context, diag, ProxyTracerProvider, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { recordEscalation, withAgentRun } from './agent';
import { runningCaptureConfig } from './capture-config';
import { createErrataSpanProcessor, exportTimeoutMillis, startErrata } from './start-errata';
import { captureDiag } from './tracing.spec-helper';
import { errataTracer } from './tracer';

it('startErrata runs once per process: a second call returns the running handle; after shutdown it starts anew', async () => {
  const exporter = new InMemorySpanExporter();
  const options = { exporter, instrumentMcpSdk: false, flushOnExit: false };
  const first = startErrata(options);
  const warned = new Promise<Error & { code?: string }>((resolve) => process.once('warning', resolve));
  expect(startErrata(options)).toBe(first);
  expect(first.servesApiTracers).toBe(true);
  // Options given to the second call are lost: a Node warning says so, visible without a diag logger.
  expect(await warned).toMatchObject({ code: 'ERRATA_ALREADY_STARTED' });

  recordEscalation({ target: 'user', reason: 'needs a decision' });
  await first.forceFlush();
  expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['errata.escalation']);
  expect(first.stats()).toMatchObject({ exported: 1, queued: 0 });

  const stopping = first.shutdown();
  expect(first.shutdown()).toBe(stopping);
  await stopping;
  const secondExporter = new InMemorySpanExporter();
  const second = startErrata({ ...options, exporter: secondExporter });
  expect(second).not.toBe(first);
  // The first handle gave the API's tracers back: the second serves them, and gets what they record.
  expect(second.servesApiTracers).toBe(true);
  trace.getTracer('another-instrumentation').startSpan('errata.escalation').end();
  await second.forceFlush();
  expect(secondExporter.getFinishedSpans()).toHaveLength(1);
  await second.shutdown();
  expect(trace.getTracerProvider()).toBeInstanceOf(ProxyTracerProvider);
  expect((trace.getTracerProvider() as ProxyTracerProvider).getDelegateTracer('any')).toBeUndefined();
});

it('shutdown restores the privacy defaults; shutting down an old handle again leaves the running one alone', async () => {
  const options = { instrumentMcpSdk: false, flushOnExit: false };
  const first = startErrata({ ...options, exporter: new InMemorySpanExporter(), captureResults: true });
  expect(runningCaptureConfig().captureResults).toBe(true);
  await first.shutdown();
  expect(runningCaptureConfig()).toEqual({});

  const secondExporter = new InMemorySpanExporter();
  const second = startErrata({ ...options, exporter: secondExporter, captureArguments: true });
  await first.shutdown();
  expect(runningCaptureConfig().captureArguments).toBe(true);
  errataTracer()
    .startSpan('errata.escalation', { attributes: { 'errata.escalation.target': 'user' } })
    .end();
  await second.forceFlush();
  expect(secondExporter.getFinishedSpans()).toHaveLength(1);
  await second.shutdown();
});

it('with OTEL_SDK_DISABLED=true, startErrata instruments, registers and sends nothing, and the agent API does not warn of it', async () => {
  process.env['OTEL_SDK_DISABLED'] = 'true';
  const { warnings } = captureDiag();
  try {
    const exporter = new InMemorySpanExporter();
    const disabled = startErrata({ exporter, flushOnExit: false });
    expect(disabled).toMatchObject({ instrumentation: null, servesApiTracers: false });
    expect((trace.getTracerProvider() as ProxyTracerProvider).getDelegateTracer('any')).toBeUndefined();
    withAgentRun({ name: 'unrecorded' }, () =>
      recordEscalation({ target: 'human', reason: 'nobody is listening' }),
    );
    await disabled.forceFlush();
    expect(exporter.getFinishedSpans()).toEqual([]);
    expect(disabled.stats()).toMatchObject({ exported: 0, queued: 0 });
    // The host disabled Errata on purpose: no "no tracer provider is set up yet, call startErrata()".
    expect(warnings).toEqual([]);
    await disabled.shutdown();
  } finally {
    delete process.env['OTEL_SDK_DISABLED'];
    diag.disable();
  }
});

it("records its spans under a parent the host did not sample, and keeps the host's decision in their context", async () => {
  const exporter = new InMemorySpanExporter();
  const handle = startErrata({ exporter, instrumentMcpSdk: false, flushOnExit: false });
  const unsampled = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: 'a'.repeat(32),
    spanId: 'b'.repeat(16),
    traceFlags: TraceFlags.NONE,
    isRemote: true,
  });
  context.with(unsampled, () => recordEscalation({ target: 'user', reason: 'needs a decision' }));
  recordEscalation({ target: 'human', reason: 'no parent' });
  await handle.forceFlush();
  const [underUnsampled, root] = exporter.getFinishedSpans();
  expect(underUnsampled?.spanContext()).toMatchObject({
    traceId: 'a'.repeat(32),
    traceFlags: TraceFlags.NONE,
  });
  expect(root?.spanContext().traceFlags).toBe(TraceFlags.SAMPLED);
  await handle.shutdown();
});

it('ends the agent runs still open at shutdown, so that they are sent with what happened in them', async () => {
  const { sent, exporter } = keepingExporter();
  const handle = startErrata({ exporter, instrumentMcpSdk: false, flushOnExit: false });
  let finish: () => void = () => undefined;
  const session = withAgentRun({ name: 'chat', role: 'coordinator' }, async () => {
    recordEscalation({ target: 'user', reason: 'which order?' });
    await new Promise<void>((resolve) => (finish = resolve));
  });
  await handle.shutdown();
  const spans = [...sent];
  expect(spans.map((span) => span.name).sort()).toEqual(['errata.escalation', 'invoke_agent chat']);
  const run = spans.find((span) => span.name === 'invoke_agent chat')!;
  expect(spans.find((span) => span.name === 'errata.escalation')!.parentSpanContext?.spanId).toBe(
    run.spanContext().spanId,
  );
  // The session going on after the shutdown ends nothing twice.
  finish();
  await session;
  expect(sent).toHaveLength(2);
});

it("records a root span OTEL_TRACES_SAMPLER would drop, and leaves it unsampled as the host's sampling says", async () => {
  process.env['OTEL_TRACES_SAMPLER'] = 'traceidratio';
  process.env['OTEL_TRACES_SAMPLER_ARG'] = '0';
  try {
    const exporter = new InMemorySpanExporter();
    const handle = startErrata({ exporter, instrumentMcpSdk: false, flushOnExit: false });
    withAgentRun({ name: 'sampled-out' }, () => recordEscalation({ target: 'user', reason: 'which order?' }));
    await handle.forceFlush();
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name).sort()).toEqual(['errata.escalation', 'invoke_agent sampled-out']);
    for (const span of spans) expect(span.spanContext().traceFlags).toBe(TraceFlags.NONE);
    await handle.shutdown();
  } finally {
    delete process.env['OTEL_TRACES_SAMPLER'];
    delete process.env['OTEL_TRACES_SAMPLER_ARG'];
  }
});

it('a sampler given in code decides instead of OTEL_TRACES_SAMPLER whether root spans are sampled; all are exported', async () => {
  process.env['OTEL_TRACES_SAMPLER'] = 'always_on';
  try {
    const exporter = new InMemorySpanExporter();
    const sampler = new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0) });
    const handle = startErrata({ exporter, sampler, instrumentMcpSdk: false, flushOnExit: false });
    withAgentRun({ name: 'sampled-out in code' }, () => recordEscalation({ target: 'user' }));
    await handle.forceFlush();
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name).sort()).toEqual([
      'errata.escalation',
      'invoke_agent sampled-out in code',
    ]);
    for (const span of spans) expect(span.spanContext().traceFlags).toBe(TraceFlags.NONE);
    await handle.shutdown();
  } finally {
    delete process.env['OTEL_TRACES_SAMPLER'];
  }
});

it('an endpoint that is no http(s) URL is an error in the log, with a guess; spans are counted as failed, nothing throws', async () => {
  const diagnosed = captureDiag();
  try {
    const processor = createErrataSpanProcessor({ endpoint: '127.0.0.1:4318', scheduledDelayMillis: 60_000 });
    expect(diagnosed.errors.map(([message]) => message)).toEqual([
      '@errata/sdk: endpoint "127.0.0.1:4318" is not an http(s) URL (did you mean "http://127.0.0.1:4318"?); Errata\'s spans are not sent',
    ]);
    const handle = startErrata({ endpoint: 'not a url', instrumentMcpSdk: false, flushOnExit: false });
    recordEscalation({ target: 'human', reason: 'stuck' });
    await handle.forceFlush();
    expect(handle.stats()).toMatchObject({ exported: 0, failed: 1 });
    await Promise.all([handle.shutdown(), processor.shutdown()]);
  } finally {
    diag.disable();
  }
});

it('one export timeout for the processor and the exporter: the option, else the OTLP timeout variables, else 30 s', () => {
  const saved = { ...process.env };
  try {
    delete process.env['OTEL_EXPORTER_OTLP_TRACES_TIMEOUT'];
    delete process.env['OTEL_EXPORTER_OTLP_TIMEOUT'];
    expect(exportTimeoutMillis({})).toBe(30_000);
    process.env['OTEL_EXPORTER_OTLP_TIMEOUT'] = '45000';
    expect(exportTimeoutMillis({})).toBe(45_000);
    process.env['OTEL_EXPORTER_OTLP_TRACES_TIMEOUT'] = '5000';
    expect(exportTimeoutMillis({})).toBe(5_000);
    expect(exportTimeoutMillis({ exportTimeoutMillis: 1_000 })).toBe(1_000);
    process.env['OTEL_EXPORTER_OTLP_TRACES_TIMEOUT'] = 'soon';
    expect(exportTimeoutMillis({})).toBe(45_000);
    process.env['OTEL_EXPORTER_OTLP_TRACES_TIMEOUT'] = '0.5'; // rounded down: 0
    expect(exportTimeoutMillis({})).toBe(45_000);
  } finally {
    process.env = saved;
  }
});

it('a wrong export timeout, given or in a variable, is one diag warning naming it, the value and the one used instead', () => {
  const saved = { ...process.env };
  const { warnings } = captureDiag();
  try {
    delete process.env['OTEL_EXPORTER_OTLP_TRACES_TIMEOUT'];
    process.env['OTEL_EXPORTER_OTLP_TIMEOUT'] = 'abc';
    expect(exportTimeoutMillis({ exportTimeoutMillis: 'abc' as never })).toBe(30_000);
    // A variable a valid option overrides is not read, so not complained of.
    expect(exportTimeoutMillis({ exportTimeoutMillis: 2_000 })).toBe(2_000);
    expect(warnings.map((w) => w[0])).toEqual([
      '@errata/sdk: OTEL_EXPORTER_OTLP_TIMEOUT must be a number of at least 1; got "abc"; 30000 is used instead',
      '@errata/sdk: exportTimeoutMillis must be a number of at least 1; got "abc"; 30000 is used instead',
    ]);
  } finally {
    process.env = saved;
    diag.disable();
  }
});

it('wrong capture settings, given or in ERRATA_CAPTURE_*, are one diag warning each at start, naming what is used instead', async () => {
  const { warnings } = captureDiag();
  process.env['ERRATA_CAPTURE_RESULTS'] = '1';
  const exporter = new InMemorySpanExporter();
  try {
    const handle = startErrata({
      exporter,
      instrumentMcpSdk: false,
      flushOnExit: false,
      textLimitBytes: '100' as never,
      captureArguments: 'yes' as never,
    });
    expect(runningCaptureConfig()).toMatchObject({
      captureResults: false,
      captureArguments: false,
      textLimitBytes: 2048,
    });
    for (let i = 0; i < 3; i++) recordEscalation({ target: 'human', reason: 'stuck' });
    await handle.shutdown();
    expect(warnings.map((w) => w[0])).toEqual([
      '@errata/sdk: ERRATA_CAPTURE_RESULTS must be true or false; got "1"; false is used instead',
      '@errata/sdk: captureArguments must be true or false; got "yes"; false is used instead',
      '@errata/sdk: textLimitBytes must be a number of at least 1; got "100"; 2048 is used instead',
    ]);
  } finally {
    delete process.env['ERRATA_CAPTURE_RESULTS'];
    diag.disable();
  }
});

it('a text limit under 1 byte (0.5) is the default: texts are sent, not cut to nothing', async () => {
  const { sent, exporter } = keepingExporter();
  const handle = startErrata({ exporter, instrumentMcpSdk: false, flushOnExit: false, textLimitBytes: 0.5 });
  recordEscalation({ target: 'human', reason: 'the refund tool keeps failing' });
  await handle.shutdown();
  expect(sent[0]?.attributes['errata.escalation.reason']).toBe('the refund tool keeps failing');
});

it('startErrata(null) is startErrata(); a URL or anything else that is no options object is a diag warning, and the defaults hold', async () => {
  const { warnings } = captureDiag();
  try {
    const options = { instrumentMcpSdk: false, flushOnExit: false, exporter: new InMemorySpanExporter() };
    // Only what is no object is checked: the running handle would hide the options of a second call.
    await startErrata(null as never).shutdown();
    expect(warnings).toEqual([]);
    await startErrata('http://127.0.0.1:4318' as never).shutdown();
    await startErrata(42 as never).shutdown();
    expect(warnings.map((w) => w[0])).toEqual([
      '@errata/sdk: startErrata takes an options object; got string "http://127.0.0.1:4318" (for an endpoint: ' +
        'startErrata({ endpoint: "http://127.0.0.1:4318" })); the defaults and the environment are used',
      '@errata/sdk: startErrata takes an options object; got number 42; the defaults and the environment are used',
    ]);
    const running = startErrata(options);
    expect(startErrata(null as never)).toBe(running);
    await running.shutdown();
  } finally {
    diag.disable();
  }
});

it('an API key is sent without the spaces and line ends around it, given as an option as in ERRATA_API_KEY', async () => {
  const authorizations: (string | undefined)[] = [];
  const receiver = createServer((req, res) => {
    authorizations.push(req.headers.authorization);
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  process.env['ERRATA_API_KEY'] = ' from-env\r\n';
  try {
    for (const apiKey of ['key\r', undefined]) {
      const handle = startErrata({ endpoint, apiKey, instrumentMcpSdk: false, flushOnExit: false });
      recordEscalation({ target: 'human', reason: 'stuck' });
      await handle.forceFlush();
      expect(handle.stats()).toMatchObject({ exported: 1, failed: 0 });
      await handle.shutdown();
    }
    const processor = createErrataSpanProcessor({
      endpoint,
      apiKey: '\tkey \n',
      scheduledDelayMillis: 60_000,
    });
    new BasicTracerProvider({ spanProcessors: [processor] })
      .getTracer('test')
      .startSpan('errata.escalation', { attributes: { 'errata.escalation.target': 'human' } })
      .end();
    await processor.shutdown();
    expect(authorizations).toEqual(['Bearer key', 'Bearer from-env', 'Bearer key']);
  } finally {
    delete process.env['ERRATA_API_KEY'];
    await new Promise((resolve) => receiver.close(resolve));
  }
});

it('an endpoint given as a URL object, or with /v1/traces already, is sent to once at /v1/traces', async () => {
  const paths: string[] = [];
  const receiver = createServer((req, res) => {
    paths.push(req.url ?? '');
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  try {
    for (const endpoint of [new URL(base) as unknown as string, `${base}/v1/traces`]) {
      const processor = createErrataSpanProcessor({ endpoint, scheduledDelayMillis: 60_000 });
      const tracer = new BasicTracerProvider({ spanProcessors: [processor] }).getTracer('test');
      tracer.startSpan('errata.escalation', { attributes: { 'errata.escalation.target': 'human' } }).end();
      await processor.forceFlush();
      expect(processor.stats()).toMatchObject({ exported: 1, failed: 0 });
      await processor.shutdown();
    }
    expect(paths).toEqual(['/v1/traces', '/v1/traces']);
  } finally {
    await new Promise((resolve) => receiver.close(resolve));
  }
});

it('with OTEL_SDK_DISABLED=true, a wrong endpoint is not even reported: no exporter is made', async () => {
  const diagnosed = captureDiag();
  process.env['OTEL_SDK_DISABLED'] = 'true';
  try {
    const handle = startErrata({ endpoint: '127.0.0.1:4318', instrumentMcpSdk: false, flushOnExit: false });
    await handle.shutdown();
    expect(diagnosed.errors).toEqual([]);
  } finally {
    delete process.env['OTEL_SDK_DISABLED'];
    diag.disable();
  }
});

it("the host's OTEL_*ATTRIBUTE*_LIMIT variables do not cut Errata's spans (they are set for the host's own backend)", async () => {
  const limits = {
    OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: '2',
    OTEL_ATTRIBUTE_COUNT_LIMIT: '2',
    OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: '8',
    OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '8',
  };
  Object.assign(process.env, limits);
  const exporter = new InMemorySpanExporter();
  const handle = startErrata({ exporter, instrumentMcpSdk: false, flushOnExit: false });
  try {
    const reason = 'the refund tool keeps failing for this order';
    withAgentRun(
      { name: 'support-coordinator', id: 'agent-7', role: 'coordinator', conversationId: 'c-1' },
      () => recordEscalation({ target: 'human', reason }),
    );
    await handle.forceFlush();
    const [escalation, run] = exporter.getFinishedSpans();
    expect(escalation!.attributes).toEqual({
      'errata.escalation.target': 'human',
      'errata.escalation.reason': reason,
    });
    expect(run!.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'support-coordinator',
      'gen_ai.agent.id': 'agent-7',
      'gen_ai.conversation.id': 'c-1',
      'errata.agent.role': 'coordinator',
    });
  } finally {
    for (const name of Object.keys(limits)) delete process.env[name];
    await handle.shutdown();
  }
});

/** An exporter that keeps what it is sent (InMemorySpanExporter forgets its spans when shut down). */
function keepingExporter(): { sent: ReadableSpan[]; exporter: SpanExporter } {
  const sent: ReadableSpan[] = [];
  const exporter: SpanExporter = {
    export: (spans, done) => {
      sent.push(...spans);
      done({ code: ExportResultCode.SUCCESS });
    },
    shutdown: () => Promise.resolve(),
  };
  return { sent, exporter };
}
