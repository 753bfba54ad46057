/** The params a traced tools/call sends: a copy whose `_meta` carries the trace context of the call's span. */
import { isSpanContextValid, propagation, type Context, type Span } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { isRecord } from '@errata/domain';

/** What NodeTracerProvider.register() installs, for when no host registered a propagator. */
const fallbackPropagator = new CompositePropagator({
  propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
});
const carrierSetter = {
  set(carrier: Record<string, unknown>, key: string, value: string) {
    carrier[key] = value;
  },
};

/**
 * A copy of the params whose `_meta` carries the span's W3C trace context (and whatever the host's propagator
 * adds, such as baggage), merged with the `_meta` already there: the SDK keeps `progressToken` and task keys in it.
 * Without a valid span, or with a `_meta` that is not an object: the params themselves.
 */
export function tracedParams(
  params: Record<string, unknown>,
  span: Span,
  spanContext: Context,
): Record<string, unknown> {
  if (!isSpanContextValid(span.spanContext())) return params;
  const existing = params['_meta'];
  // A `_meta` that is not an object is the host's to send as it is: the server's answer to it is theirs to get.
  if (existing !== undefined && !isRecord(existing)) return params;
  const meta = existing === undefined ? {} : copyOf(existing);
  // A tracestate goes with the traceparent it came with; the one written here replaces the host's.
  if ('tracestate' in meta && span.spanContext().traceState === undefined) delete meta['tracestate'];
  const before = meta['traceparent'];
  propagation.inject(spanContext, meta, carrierSetter);
  // The host's propagator (W3C by default in the OpenTelemetry SDK) usually wrote this span's traceparent already;
  // without one (Errata registers none, so as not to take the host's place), the fallback writes it.
  if (meta['traceparent'] === before) fallbackPropagator.inject(spanContext, meta, carrierSetter);
  const sent = copyOf(params);
  sent['_meta'] = meta;
  return sent;
}

/**
 * A shallow copy, as `{ ...record }` makes, to add keys to. Not `{ ...record, key: value }`: on Node 20 a spread
 * followed by more keys takes V8's slow path, about 1.5 µs per object against 0.25 µs for this, on every call.
 * An own `__proto__` key (params parsed from JSON can have one) would set the copy's prototype under
 * Object.assign, and so be lost in sending: such a record is spread.
 */
export function copyOf(record: Record<string, unknown>): Record<string, unknown> {
  return Object.hasOwn(record, '__proto__') ? { ...record } : Object.assign({}, record);
}
