import { describe, expect, it } from 'vitest';
import { decodeTraceRequest, type OtlpEncoding } from './index';
import {
  encode,
  ENCODINGS,
  OTHER_SPAN_ID,
  request,
  span,
  SPAN_ID,
  TRACE_ID,
  type JsonSpan,
} from './request.fixture';

/** Field names differ by encoding: each reason uses the spelling the sender used. */
const FIELD: Record<OtlpEncoding, Record<string, string>> = {
  protobuf: {
    traceId: 'trace_id',
    spanId: 'span_id',
    parentSpanId: 'parent_span_id',
    start: 'start_time_unix_nano',
    end: 'end_time_unix_nano',
  },
  json: {
    traceId: 'traceId',
    spanId: 'spanId',
    parentSpanId: 'parentSpanId',
    start: 'startTimeUnixNano',
    end: 'endTimeUnixNano',
  },
};

describe.each(ENCODINGS)('decodeTraceRequest validation (%s)', (encoding) => {
  const field = FIELD[encoding];

  /** Decodes a good span next to a bad one and returns the single rejection. */
  function rejectBeside(bad: JsonSpan, options?: { maxAttributeValueBytes?: number }) {
    const decoded = decodeTraceRequest(encode(request([span(), bad]), encoding), encoding, options);
    expect(decoded.spans.map((s) => s.spanId)).toEqual([SPAN_ID]);
    expect(decoded.rejected).toHaveLength(1);
    const [rejected] = decoded.rejected;
    if (!rejected) throw new Error('no rejection');
    return rejected;
  }

  const id = encoding === 'protobuf' ? (n: number) => `${n} bytes` : (n: number) => `${n * 2} hex characters`;

  it('rejects a trace id of the wrong length', () => {
    const rejected = rejectBeside(span({ traceId: 'abcdef', spanId: OTHER_SPAN_ID }));
    expect(rejected).toEqual({
      traceId: null,
      spanId: OTHER_SPAN_ID,
      reason: expect.stringContaining(`${field.traceId} must be ${id(16)}`),
    });
    if (encoding === 'protobuf') expect(rejected.reason).toBe('trace_id must be 16 bytes (got 3)');
  });

  it('rejects an all-zero trace id and an all-zero span id', () => {
    expect(rejectBeside(span({ traceId: '0'.repeat(32) })).reason).toBe(`${field.traceId} is all zeros`);
    expect(rejectBeside(span({ spanId: '0'.repeat(16) })).reason).toBe(`${field.spanId} is all zeros`);
  });

  it('rejects a span id of the wrong length', () => {
    const rejected = rejectBeside(span({ spanId: 'abcdef0123' }));
    expect(rejected.traceId).toBe(TRACE_ID);
    expect(rejected.spanId).toBeNull();
    expect(rejected.reason).toContain(`${field.spanId} must be ${id(8)}`);
  });

  it('rejects empty ids', () => {
    expect(rejectBeside(span({ traceId: '' })).reason).toBe(`${field.traceId} is missing (empty)`);
    expect(rejectBeside(span({ spanId: '' })).reason).toBe(`${field.spanId} is missing (empty)`);
  });

  it('rejects a parent id that is neither empty nor 8 bytes', () => {
    expect(rejectBeside(span({ spanId: OTHER_SPAN_ID, parentSpanId: 'abcd' })).reason).toContain(
      `${field.parentSpanId} must be ${id(8)} or empty`,
    );
  });

  it('treats an empty or all-zero parent id as a root span', () => {
    const decoded = decodeTraceRequest(
      encode(
        request([span({ parentSpanId: '' }), span({ spanId: OTHER_SPAN_ID, parentSpanId: '0'.repeat(16) })]),
        encoding,
      ),
      encoding,
    );
    expect(decoded.rejected).toEqual([]);
    expect(decoded.spans.map((s) => s.parentSpanId)).toEqual([null, null]);
  });

  it('rejects a missing start time', () => {
    const { startTimeUnixNano: _omitted, ...noStart } = span({ spanId: OTHER_SPAN_ID });
    expect(rejectBeside(noStart).reason).toBe(`${field.start} is missing or zero`);
  });

  it('rejects an end time before the start time', () => {
    const reason = rejectBeside(span({ endTimeUnixNano: '1767225600000000000' })).reason;
    expect(reason).toBe(`${field.end} (1767225600000000000) is before ${field.start} (1767225600123456789)`);
  });

  it('rejects times at or after 2^63 ns (the year 2262), which Errata cannot store; accepts the last one before', () => {
    const late = '9223372036854775808';
    expect(rejectBeside(span({ endTimeUnixNano: late })).reason).toBe(
      `${field.end} (${late}) is after the year 2262, past what Errata can store`,
    );
    expect(
      rejectBeside(
        span({ startTimeUnixNano: '18446744073709551615', endTimeUnixNano: '18446744073709551615' }),
      ).reason,
    ).toContain('after the year 2262');
    const last = '9223372036854775807';
    const decoded = decodeTraceRequest(
      encode(request([span({ startTimeUnixNano: last, endTimeUnixNano: last })]), encoding),
      encoding,
    );
    expect(decoded.rejected).toEqual([]);
  });

  it('rejects a 10 MB attribute, naming it and its size', () => {
    const huge = 'x'.repeat(10 * 1024 * 1024);
    const rejected = rejectBeside(
      span({
        spanId: OTHER_SPAN_ID,
        attributes: [{ key: 'gen_ai.tool.call.result', value: { stringValue: huge } }],
      }),
    );
    expect(rejected.spanId).toBe(OTHER_SPAN_ID);
    expect(rejected.reason).toBe(
      'attribute "gen_ai.tool.call.result" is 10485760 bytes, over the 1048576-byte limit',
    );
  });

  it('counts UTF-8 bytes, not characters, and honours maxAttributeValueBytes', () => {
    const attributes = [{ key: 'emoji', value: { stringValue: '✓'.repeat(40) } }]; // 120 UTF-8 bytes
    const rejected = rejectBeside(span({ spanId: OTHER_SPAN_ID, attributes }), {
      maxAttributeValueBytes: 100,
    });
    expect(rejected.reason).toBe('attribute "emoji" is 120 bytes, over the 100-byte limit');
    const fits = decodeTraceRequest(encode(request([span({ attributes })]), encoding), encoding, {
      maxAttributeValueBytes: 120,
    });
    expect(fits.rejected).toEqual([]);
  });

  it('totals nested arrays and key-value lists', () => {
    const value = {
      kvlistValue: {
        values: [
          {
            key: 'ab',
            value: { arrayValue: { values: [{ stringValue: 'x'.repeat(60) }, { intValue: '1' }] } },
          },
          { key: 'cd', value: { stringValue: 'y'.repeat(30) } },
        ],
      },
    };
    const rejected = rejectBeside(span({ spanId: OTHER_SPAN_ID, attributes: [{ key: 'nested', value }] }), {
      maxAttributeValueBytes: 100,
    });
    // keys 2 + 2, strings 60 + 30, one int counted as 8
    expect(rejected.reason).toBe(
      'attribute "nested" (key-value list) totals 102 bytes, over the 100-byte limit',
    );
  });

  it('rejects every span of a resource whose attribute is too large, and only those', () => {
    const body = request(
      [span(), span({ spanId: OTHER_SPAN_ID })],
      [{ key: 'host.blob', value: { stringValue: 'z'.repeat(200) } }],
    );
    body.resourceSpans.push(request([span({ spanId: 'aaaaaaaaaaaaaaaa' })]).resourceSpans[0]);
    const decoded = decodeTraceRequest(encode(body, encoding), encoding, { maxAttributeValueBytes: 100 });
    expect(decoded.spans.map((s) => s.spanId)).toEqual(['aaaaaaaaaaaaaaaa']);
    expect(decoded.rejected.map((r) => r.reason)).toEqual([
      'resource attribute "host.blob" is 200 bytes, over the 100-byte limit',
      'resource attribute "host.blob" is 200 bytes, over the 100-byte limit',
    ]);
  });

  it('defaults status, scope and name when absent', () => {
    const body = {
      resourceSpans: [
        { scopeSpans: [{ spans: [span({ status: undefined, name: undefined, attributes: undefined })] }] },
      ],
    };
    const [decoded] = decodeTraceRequest(encode(body, encoding), encoding).spans;
    expect(decoded).toMatchObject({
      name: '',
      status: { code: 0, message: '' },
      scope: { name: '', version: '' },
      resource: {},
      attributes: {},
    });
  });

  it('decodes an empty request to no spans', () => {
    expect(decodeTraceRequest(encode({ resourceSpans: [] }, encoding), encoding)).toEqual({
      spans: [],
      rejected: [],
    });
  });
});
