import { SpanKind, type Attributes, type Context, type Tracer } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

/** A seeded generator (a linear congruential one): `next(n)` is in [0, n), the same sequence for the same seed. */
export function seededRandom(seed: number): (n: number) => number {
  let state = seed;
  return (n) => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31), state % n);
}

/** A real OpenTelemetry tracer whose ended spans are kept in memory, in the order they ended. */
export function memoryTracer(
  serviceName: string,
  scopeName = serviceName,
): { tracer: Tracer; finished: () => ReadableSpan[] } {
  const memory = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  }).getTracer(scopeName);
  return { tracer, finished: () => memory.getFinishedSpans() };
}

/** An `invoke_agent` span as DOMAIN.md §5 has agent runtimes send it (started; the caller ends it). */
export const agentSpan = (tracer: Tracer, name: string, startMs: number, parent: Context, role?: string) =>
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

/** A span of no duration: an escalation or a subagent report. */
export const instantSpan = (
  tracer: Tracer,
  parent: Context,
  name: string,
  atMs: number,
  attributes: Attributes,
): void => tracer.startSpan(name, { kind: SpanKind.INTERNAL, startTime: atMs, attributes }, parent).end(atMs);
