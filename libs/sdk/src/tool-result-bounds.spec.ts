/**
 * What `toolResultAttributes` promises of any result a server may send, checked on generated ones (fast-check):
 * the result is only read, every text it sends fits the limit, the outcome attributes agree with each other, and
 * Errata stores what was sent.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toolResultAttributes } from './tool-result';
import { toEvents } from './tracing.spec-helper';

/** Text of every kind: plain, JSON, secrets-looking, any code point (`unit: 'binary'`), a lone surrogate. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
  fc.constantFrom(
    'No results found',
    '{"ok":false,"error":{"code":"E_TIMEOUT","message":"upstream timed out"}}',
    '{"errorCategory":"transient","isRetryable":true,"retryAfterMs":2000}',
    'Authorization: Bearer sk-abcdefghijklmnopqrstuvwxyz123456 for ada@example.com',
    '',
    '   ',
    'half an emoji: \uD83D, then the rest',
  ),
);

const block = fc.oneof(
  text.map((value) => ({ type: 'text', text: value })),
  fc.constant({ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }),
  fc.constant({ type: 'resource_link', uri: 'file:///tmp/report.csv', name: 'report.csv' }),
);

const structured = fc.oneof(
  fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 6 }),
  fc.record({
    items: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 40 }),
    errorCategory: fc.constantFrom('transient', 'validation', 'permission', 'business'),
  }),
);

const result = fc.record(
  {
    content: fc.array(block, { maxLength: 4 }),
    structuredContent: structured,
    isError: fc.boolean(),
    _meta: fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  },
  { requiredKeys: ['content'] },
);

const options = fc.record({
  captureResults: fc.boolean(),
  textLimitBytes: fc.integer({ min: 16, max: 4096 }),
});

const utf8Bytes = (value: string): number => Buffer.byteLength(value, 'utf8');

/** A text as UTF-8 carries it (OTLP's strings are UTF-8): a lone surrogate becomes U+FFFD. */
const wellFormed = (value: unknown): unknown =>
  typeof value === 'string' ? Buffer.from(value, 'utf8').toString('utf8') : (value ?? null);

describe('toolResultAttributes, on any result', () => {
  it('reads the result without changing it, and answers the same for the same result', () => {
    fc.assert(
      fc.property(result, options, (given, capture) => {
        const before = structuredClone(given);
        const first = toolResultAttributes(given, 'search_orders', capture);
        expect(given).toEqual(before);
        expect(toolResultAttributes(given, 'search_orders', capture)).toEqual(first);
      }),
      { numRuns: 300 },
    );
  });

  it('sends no text longer than the limit, in UTF-8 bytes', () => {
    fc.assert(
      fc.property(result, options, (given, capture) => {
        const attributes = toolResultAttributes(given, 'search_orders', capture);
        for (const [key, value] of Object.entries(attributes)) {
          if (typeof value === 'string')
            expect(utf8Bytes(value), key).toBeLessThanOrEqual(capture.textLimitBytes);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('says what the result says of itself: an error is an error, never empty, and sends its text', () => {
    fc.assert(
      fc.property(result, options, (given, capture) => {
        const attributes = toolResultAttributes(given, 'search_orders', capture);
        const isError = given.isError === true;
        expect(attributes['errata.result.is_error']).toBe(isError);
        expect(attributes['error.type']).toBe(isError ? 'tool_error' : undefined);
        if (isError) expect(attributes['errata.result.empty']).toBe(false);
        const itemCount = attributes['errata.result.item_count'];
        if (itemCount !== undefined) expect(Number.isInteger(itemCount) && Number(itemCount) >= 0).toBe(true);
        const texts = given.content.flatMap((b) => ('text' in b && b.text !== '' ? [b.text] : []));
        if ((isError || attributes['errata.result.empty'] === true) && texts.length > 0) {
          expect(attributes['errata.result.text']).toEqual(expect.any(String));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('reaches Errata as sent: a span with them, through OTLP protobuf, is stored with the same outcome and fields', () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer(
      't',
    );
    fc.assert(
      fc.property(result, options, (given, capture) => {
        exporter.reset();
        const attributes = toolResultAttributes(given, 'search_orders', capture);
        const span = tracer.startSpan('tools/call search_orders', {
          kind: SpanKind.CLIENT,
          attributes: {
            'mcp.method.name': 'tools/call',
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': 'search_orders',
            ...attributes,
          },
        });
        if (given.isError === true) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
        const [event] = toEvents(exporter.getFinishedSpans());
        if (event?.type !== 'ToolCallObserved')
          throw new Error(`not stored as a call: ${JSON.stringify(event)}`);
        const { outcome, result: stored, declared } = event.data;
        const empty = attributes['errata.result.empty'] === true;
        expect(outcome).toBe(given.isError === true ? 'tool_error' : empty ? 'ok_empty' : 'ok');
        expect(stored).toMatchObject({
          isError: given.isError === true,
          empty,
          itemCount: attributes['errata.result.item_count'] ?? null,
          textMirror: attributes['errata.result.text_mirror'] ?? null,
          text: wellFormed(attributes['errata.result.text']),
          structured: wellFormed(attributes['errata.result.structured']),
        });
        expect(declared.category).toBe(attributes['errata.error.category'] ?? null);
        expect(declared.retryable).toBe(attributes['errata.error.retryable'] ?? null);
      }),
      { numRuns: 300 },
    );
  });
});
