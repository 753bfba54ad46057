// Test-only: OTLP/JSON-shaped requests, sent either as JSON or (via encodeTraceRequestProtobuf) as
// protobuf, so each validation rule is checked once for both encodings.
import { encodeTraceRequestProtobuf, type OtlpEncoding } from './index';

export const TRACE_ID = '5b8efff798038103d269b633813fc60c';
export const SPAN_ID = 'eee19b7ec3c1b174';
export const OTHER_SPAN_ID = 'eee19b7ec3c1b175';
export const PARENT_ID = 'eee19b7ec3c1b173';

export type JsonSpan = Record<string, unknown>;

/** A valid span; override fields to break exactly one rule. */
export function span(overrides: JsonSpan = {}): JsonSpan {
  return {
    traceId: TRACE_ID,
    spanId: SPAN_ID,
    parentSpanId: PARENT_ID,
    name: 'tools/call',
    kind: 3,
    startTimeUnixNano: '1767225600123456789',
    endTimeUnixNano: '1767225600223456789',
    attributes: [{ key: 'gen_ai.tool.name', value: { stringValue: 'get_weather' } }],
    status: { code: 2, message: 'boom' },
    ...overrides,
  };
}

export function request(spans: unknown[], resourceAttributes: unknown[] = []): { resourceSpans: unknown[] } {
  return {
    resourceSpans: [
      {
        resource: {
          attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }, ...resourceAttributes],
        },
        scopeSpans: [{ scope: { name: 'scope', version: '1.0.0' }, spans }],
      },
    ],
  };
}

export function encode(body: { resourceSpans: unknown[] }, encoding: OtlpEncoding): Uint8Array {
  return encoding === 'protobuf'
    ? encodeTraceRequestProtobuf(body)
    : Buffer.from(JSON.stringify(body), 'utf8');
}

export const ENCODINGS: readonly OtlpEncoding[] = ['protobuf', 'json'];
