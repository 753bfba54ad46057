/** Test tracing for the specs: a real provider, an in-memory exporter, and the OTLP round trip Errata sees. */
import { context, diag, trace, type Tracer, type TracerProvider } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { normalizeSpan, type ErrataEvent, type SpanRecord } from '@errata/domain';
import { decodeTraceRequest } from '@errata/otlp';

export interface TestTracing {
  readonly provider: BasicTracerProvider;
  readonly exporter: InMemorySpanExporter;
  spans(): ReadableSpan[];
  reset(): void;
}

/**
 * Registers a provider with a SimpleSpanProcessor over an InMemorySpanExporter (or the given processors) as the
 * global one, with the AsyncLocalStorage context manager. Vitest runs each spec file in its own process.
 */
export function registerTestTracing(processors?: SpanProcessor[]): TestTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: processors ?? [new SimpleSpanProcessor(exporter)],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  return {
    provider,
    exporter,
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
  };
}

/** Spans as Errata decodes them: serialized with the OTel JS protobuf serializer, decoded by @errata/otlp. */
export function toSpanRecords(spans: ReadableSpan[]): SpanRecord[] {
  const body = ProtobufTraceSerializer.serializeRequest(spans);
  if (body === undefined) throw new Error('the OTLP serializer produced no body');
  const decoded = decodeTraceRequest(body, 'protobuf', { maxAttributeValueBytes: 1 << 20 });
  if (decoded.rejected.length > 0) throw new Error(`spans rejected: ${JSON.stringify(decoded.rejected)}`);
  return decoded.spans;
}

/** The events Errata stores for these spans (null for spans it drops). */
export function toEvents(spans: ReadableSpan[]): (ErrataEvent | null)[] {
  return toSpanRecords(spans).map((record) => normalizeSpan(record));
}

/** Routes `diag` errors and warnings into arrays (everything else is dropped); `diag.disable()` ends it. */
export function captureDiag(): { errors: unknown[][]; warnings: unknown[][] } {
  const captured = { errors: [] as unknown[][], warnings: [] as unknown[][] };
  const ignore = () => undefined;
  diag.setLogger({
    error: (...args: unknown[]) => captured.errors.push(args),
    warn: (...args: unknown[]) => captured.warnings.push(args),
    info: ignore,
    debug: ignore,
    verbose: ignore,
  });
  return captured;
}

/** A tracer provider whose tracers throw on every span: fault injection for "never throws into the host". */
export function brokenTracerProvider(): TracerProvider {
  const broken: Tracer = {
    startSpan() {
      throw new Error('tracer broken');
    },
    startActiveSpan() {
      throw new Error('tracer broken');
    },
  };
  return { getTracer: () => broken };
}
