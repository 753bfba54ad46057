/**
 * The tracer of the agent API and of `instrumentMcpClient`: the provider `startErrata` set up, else the global
 * one. Instrumentation spans use the instrumentation's own tracer (setTracerProvider, else global).
 */
import { trace, type Tracer, type TracerProvider } from '@opentelemetry/api';
import { PACKAGE_NAME, PACKAGE_VERSION } from './version';

let provider: TracerProvider | undefined;
let cached: { provider: TracerProvider; tracer: Tracer } | undefined;

export function setErrataTracerProvider(next: TracerProvider | undefined): void {
  provider = next;
  cached = undefined;
}

export function errataTracer(): Tracer {
  const current = provider ?? trace.getTracerProvider();
  if (cached?.provider !== current)
    cached = { provider: current, tracer: current.getTracer(PACKAGE_NAME, PACKAGE_VERSION) };
  return cached.tracer;
}
