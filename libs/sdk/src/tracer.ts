/**
 * The tracer of the agent API and of `instrumentMcpClient`: the provider `startErrata` set up, else the global
 * one. Instrumentation spans use the instrumentation's own tracer (setTracerProvider, else global).
 */
import {
  context,
  diag,
  INVALID_SPANID,
  trace,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { isTracingSuppressed } from '@opentelemetry/core';
import { safeDiag } from './safe-diag';
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

let warnedUnrecorded = false;

/** Whether the host disabled Errata (`OTEL_SDK_DISABLED=true`): spans are then not recorded on purpose. */
let disabled = false;

export function setErrataDisabled(next: boolean): void {
  disabled = next;
}

/**
 * Says once, at warning level, that spans are being lost because no tracer provider is set up yet: the API's no-op
 * tracer gives spans whose ids are all zeros (compared as a string: this runs on every tool call). Tracing the host
 * suppressed gives such spans too, and is no mistake; nor is Errata disabled by `OTEL_SDK_DISABLED`.
 */
export function warnIfNoTracerProvider(span: Span, what: string): void {
  if (warnedUnrecorded || disabled || span.spanContext().spanId !== INVALID_SPANID) return;
  if (isTracingSuppressed(context.active())) return;
  warnedUnrecorded = true;
  safeDiag(() =>
    diag.warn(
      `@errata/sdk: ${what} is not recorded: no tracer provider is set up yet. Call startErrata() (or start your ` +
        'OpenTelemetry SDK) before the agent starts working: a run started before is lost with everything inside it.',
    ),
  );
}
