import { describe, expect, it } from 'vitest';
import { decodeTraceRequest, OtlpDecodeError } from './index';
import { request, span, SPAN_ID, TRACE_ID } from './request.fixture';

function decodeJson(body: unknown) {
  return decodeTraceRequest(Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)), 'json');
}

function onlySpan(body: unknown) {
  const decoded = decodeJson(body);
  expect(decoded.rejected).toEqual([]);
  expect(decoded.spans).toHaveLength(1);
  const [first] = decoded.spans;
  if (!first) throw new Error('no span');
  return first;
}

describe('decodeTraceRequest, OTLP/JSON specifics', () => {
  it('accepts int64 fields as decimal strings and as numbers', () => {
    const asNumbers = onlySpan(
      request([
        span({
          startTimeUnixNano: 1_767_225_600_000_000_000,
          endTimeUnixNano: 1_767_225_601_000_000_000,
          attributes: [{ key: 'n', value: { intValue: 42 } }],
        }),
      ]),
    );
    expect(asNumbers.startTimeUnixNano).toBe(1_767_225_600_000_000_000n);
    expect(asNumbers.endTimeUnixNano).toBe(1_767_225_601_000_000_000n);
    expect(asNumbers.attributes).toEqual({ n: 42 });

    const asStrings = onlySpan(
      request([
        span({
          startTimeUnixNano: '1767225600123456789',
          endTimeUnixNano: '1767225600123456790',
          attributes: [
            { key: 'n', value: { intValue: '42' } },
            { key: 'big', value: { intValue: '9223372036854775807' } },
            { key: 'min', value: { intValue: '-9223372036854775808' } },
          ],
        }),
      ]),
    );
    expect(asStrings.startTimeUnixNano).toBe(1_767_225_600_123_456_789n);
    expect(asStrings.endTimeUnixNano).toBe(1_767_225_600_123_456_790n);
    expect(asStrings.attributes).toEqual({ n: 42, big: '9223372036854775807', min: '-9223372036854775808' });
  });

  it('reads hex ids case-insensitively and returns them lowercase', () => {
    const decoded = onlySpan(
      request([
        span({
          traceId: TRACE_ID.toUpperCase(),
          spanId: SPAN_ID.toUpperCase(),
          parentSpanId: 'ABCDEF0123456789',
        }),
      ]),
    );
    expect(decoded.traceId).toBe(TRACE_ID);
    expect(decoded.spanId).toBe(SPAN_ID);
    expect(decoded.parentSpanId).toBe('abcdef0123456789');
  });

  it('rejects base64 ids with a hint, and non-hex ids', () => {
    const base64TraceId = Buffer.from(TRACE_ID, 'hex').toString('base64');
    const decoded = decodeJson(
      request([span({ traceId: base64TraceId }), span({ spanId: 'zzzzzzzzzzzzzzzz' })]),
    );
    expect(decoded.spans).toEqual([]);
    expect(decoded.rejected.map((r) => r.reason)).toEqual([
      `traceId must be 32 hex characters (got "${base64TraceId}"; OTLP/JSON ids are hex, not base64)`,
      'spanId must be 16 hex characters (got "zzzzzzzzzzzzzzzz")',
    ]);
  });

  it('ignores unknown fields at every level', () => {
    const body = {
      futureTopLevel: { anything: [1, 2] },
      resourceSpans: [
        {
          schemaUrl: 'https://example.com',
          resource: {
            attributes: [{ key: 'service.name', value: { stringValue: 'svc' }, extra: 1 }],
            entityRefs: [],
          },
          scopeSpans: [
            {
              scope: { name: 's', version: 'v', attributes: [], droppedAttributesCount: 0, shiny: true },
              spans: [
                span({
                  flags: 257,
                  traceState: 'a=b',
                  events: [{ name: 'e' }],
                  links: [],
                  newField: { x: 1 },
                }),
              ],
            },
          ],
        },
      ],
    };
    const decoded = onlySpan(body);
    expect(decoded.resource).toEqual({ 'service.name': 'svc' });
    expect(decoded.scope).toEqual({ name: 's', version: 'v' });
  });

  it('ignores snake_case keys, which OTLP/JSON does not allow', () => {
    const decoded = decodeJson(
      request([
        span({ start_time_unix_nano: '1', name: 'camel', span_kind: 5 }),
        { trace_id: TRACE_ID, span_id: SPAN_ID, start_time_unix_nano: '1767225600123456789' },
      ]),
    );
    expect(decoded.spans).toHaveLength(1);
    expect(decoded.spans[0]).toMatchObject({
      name: 'camel',
      kind: 3,
      startTimeUnixNano: 1_767_225_600_123_456_789n,
    });
    expect(decoded.rejected).toEqual([{ traceId: null, spanId: null, reason: 'traceId is missing (empty)' }]);
  });

  it('maps bytesValue (base64), doubles, bools and empty values', () => {
    const decoded = onlySpan(
      request([
        span({
          attributes: [
            { key: 'bytes', value: { bytesValue: 'AQL/' } },
            { key: 'urlSafeBytes', value: { bytesValue: 'AQL_' } },
            { key: 'double', value: { doubleValue: 0.25 } },
            { key: 'doubleString', value: { doubleValue: '1.5' } },
            { key: 'nan', value: { doubleValue: 'NaN' } },
            { key: 'bool', value: { boolValue: false } },
            { key: 'empty', value: {} },
            { key: 'missing' },
            { key: 'emptyArray', value: { arrayValue: {} } },
            { key: 'emptyList', value: { kvlistValue: { values: [] } } },
          ],
        }),
      ]),
    );
    expect(decoded.attributes).toEqual({
      bytes: 'AQL/',
      urlSafeBytes: 'AQL/',
      double: 0.25,
      doubleString: 1.5,
      nan: 'NaN',
      bool: false,
      empty: null,
      missing: null,
      emptyArray: [],
      emptyList: {},
    });
  });

  it('accepts enum names as well as the integers OTLP/JSON requires', () => {
    const decoded = onlySpan(
      request([span({ kind: 'SPAN_KIND_SERVER', status: { code: 'STATUS_CODE_ERROR' } })]),
    );
    expect(decoded.kind).toBe(2);
    expect(decoded.status).toEqual({ code: 2, message: '' });
  });

  it('keeps an attribute named __proto__ as data', () => {
    const decoded = onlySpan(
      request([span({ attributes: [{ key: '__proto__', value: { stringValue: 'x' } }] })]),
    );
    expect(Object.getPrototypeOf(decoded.attributes)).toBe(Object.prototype);
    expect(Object.keys(decoded.attributes)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(decoded.attributes, '__proto__')?.value).toBe('x');
  });

  it('rejects a span whose fields have the wrong JSON types, keeping the others', () => {
    const decoded = decodeJson(
      request([
        span(),
        span({ spanId: 'eee19b7ec3c1b100', startTimeUnixNano: 'soon' }),
        span({ spanId: 'eee19b7ec3c1b101', attributes: [{ key: 'n', value: { intValue: 1.5 } }] }),
        span({ spanId: 'eee19b7ec3c1b102', attributes: { not: 'an array' } }),
        span({ spanId: 'eee19b7ec3c1b103', kind: 'sideways' }),
        span({ spanId: 'eee19b7ec3c1b104', name: 7 }),
        42,
      ]),
    );
    expect(decoded.spans.map((s) => s.spanId)).toEqual([SPAN_ID]);
    expect(decoded.rejected.map((r) => r.reason)).toEqual([
      'startTimeUnixNano must be an unsigned 64-bit integer, as a decimal string or number (got "soon")',
      'attribute "n" intValue must be a 64-bit integer, as a decimal string or number (got 1.5)',
      'attributes must be an array of {"key", "value"} objects (got an object)',
      'kind must be an integer enum value (got "sideways")',
      'name must be a string (got 7)',
      'span must be an object (got 42)',
    ]);
  });

  it('rejects attributes nested too deeply instead of overflowing the stack', () => {
    // Built as text: JSON.stringify itself would overflow on an object this deep.
    const depth = 100_000;
    const value = `${'{"arrayValue":{"values":['.repeat(depth)}{"stringValue":"leaf"}${']}}'.repeat(depth)}`;
    const attributes = `[{"key":"deep","value":${value}}]`;
    const body = JSON.stringify(request([span({ attributes: '@' })])).replace('"@"', attributes);
    const decoded = decodeJson(body);
    expect(decoded.spans).toEqual([]);
    expect(decoded.rejected[0]?.reason).toBe(
      'attribute "deep" arrayValue nests arrays or key-value lists more than 32 levels deep',
    );
  });

  it.each([
    ['invalid JSON', '{"resourceSpans": [', /^Body is not valid JSON: /],
    ['an array', '[]', /must be an ExportTraceServiceRequest object \(got an array\)/],
    ['null', 'null', /must be an ExportTraceServiceRequest object \(got null\)/],
    ['a string', '"hi"', /must be an ExportTraceServiceRequest object \(got "hi"\)/],
    [
      'non-array resourceSpans',
      '{"resourceSpans": {}}',
      /^resourceSpans must be an array \(got an object\)$/,
    ],
    [
      'a non-object ResourceSpans',
      '{"resourceSpans": [1]}',
      /^resourceSpans\[0\] must be an object \(got 1\)$/,
    ],
    [
      'non-array spans',
      '{"resourceSpans": [{"scopeSpans": [{"spans": "x"}]}]}',
      /^resourceSpans\[0\]\.scopeSpans\[0\]\.spans must be an array \(got "x"\)$/,
    ],
    ['an empty body', '', /^Body is not valid JSON: /],
  ])('throws OtlpDecodeError for %s', (_label, body, message) => {
    expect(() => decodeJson(body)).toThrow(OtlpDecodeError);
    expect(() => decodeJson(body)).toThrow(message);
  });

  it('decodes {} and a UTF-8 byte-order mark', () => {
    expect(decodeJson('{}')).toEqual({ spans: [], rejected: [] });
    expect(decodeJson('\uFEFF{"resourceSpans": []}')).toEqual({ spans: [], rejected: [] });
  });
});
