// Test-only: builds spans with the real OpenTelemetry SDK and serializes them with the real OTLP
// serializers, so the decoders are checked against what exporters actually send.
import {
  context,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes as OtelAttributes,
} from '@opentelemetry/api';
import { ProtobufTraceSerializer, JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

/** [seconds, nanoseconds]: the SDK's HrTime, which keeps nanoseconds exact. */
export const START: [number, number] = [1_767_225_600, 123_456_789];
export const END: [number, number] = [1_767_225_601, 987_654_321];
export const START_NANOS = 1_767_225_600_123_456_789n;
export const END_NANOS = 1_767_225_601_987_654_321n;

export interface RealSpans {
  readonly parent: ReadableSpan;
  readonly child: ReadableSpan;
  readonly all: ReadableSpan[];
}

/** A CLIENT root span and an INTERNAL error child carrying every attribute type the API allows. */
export function makeRealSpans(): RealSpans {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'agent-under-test', 'service.instance.count': 3 }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('errata-tests', '1.2.3');
  const parent = tracer.startSpan('tools/call get_weather', {
    kind: SpanKind.CLIENT,
    startTime: START,
    attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'get_weather' },
  });
  parent.setStatus({ code: SpanStatusCode.OK });
  const child = tracer.startSpan(
    'execute_tool',
    { kind: SpanKind.INTERNAL, startTime: START },
    trace.setSpan(context.active(), parent),
  );
  // Events and links are not part of a SpanRecord; decoders must step over them.
  child.addEvent('retry', { 'retry.attempt': 1 }, START);
  child.addLink({ context: parent.spanContext(), attributes: { 'link.kind': 'follows' } });
  child.setAttributes({
    'a.string': 'héllo ✓',
    'a.empty': '',
    'a.int': 42,
    'a.negative': -7,
    'a.double': 2.5,
    'a.true': true,
    'a.false': false,
    'a.strings': ['x', 'y'],
    'a.ints': [1, 2, 3],
    'a.doubles': [0.5, 1.5],
    'a.bools': [true, false],
  });
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'upstream timed out' });
  child.end(END);
  parent.end(END);
  const [first, second] = exporter.getFinishedSpans();
  if (!first || !second) throw new Error('expected two finished spans');
  return { child: first, parent: second, all: [first, second] };
}

/**
 * The API only accepts primitives and their arrays, but the serializers also encode maps and
 * Uint8Array (as kvlistValue and bytesValue); a span view with such attributes exercises those.
 */
export function withAttributes(span: ReadableSpan, attributes: Record<string, unknown>): ReadableSpan {
  return Object.create(span, { attributes: { value: attributes as OtelAttributes } }) as ReadableSpan;
}

export function protobufBody(spans: ReadableSpan[]): Uint8Array {
  const body = ProtobufTraceSerializer.serializeRequest(spans);
  if (!body) throw new Error('serializer returned nothing');
  return body;
}

export function jsonBody(spans: ReadableSpan[]): Uint8Array {
  const body = JsonTraceSerializer.serializeRequest(spans);
  if (!body) throw new Error('serializer returned nothing');
  return body;
}

export function hexIds(span: ReadableSpan): { traceId: string; spanId: string } {
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}
