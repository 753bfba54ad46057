import * as protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { decodeTraceRequest, encodeTraceRequestProtobuf, OtlpDecodeError } from './index';
import { protoTypes } from './proto-root';
import { makeRealSpans, protobufBody } from './real-spans.fixture';
import { span, SPAN_ID, TRACE_ID } from './request.fixture';

function decodeProtobuf(body: Uint8Array) {
  return decodeTraceRequest(body, 'protobuf');
}

/** Deterministic noise (xorshift32), so a failure can be replayed. */
function noise(length: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let x = seed;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  return bytes;
}

/** A length-delimited field: tag for (field, wire type 2), length, payload. */
function lengthDelimited(field: number, payload: Uint8Array): Buffer {
  const writer = protobuf.Writer.create();
  writer.uint32((field << 3) | 2).bytes(payload);
  return Buffer.from(writer.finish());
}

function encodeMessage(typeName: string, value: object): Buffer {
  const type = protoTypes().exportTraceServiceRequest.root.lookupType(typeName);
  return Buffer.from(type.encode(type.fromObject(value)).finish());
}

describe('decodeTraceRequest, protobuf specifics', () => {
  it('decodes an empty body as an empty request', () => {
    expect(decodeProtobuf(new Uint8Array(0))).toEqual({ spans: [], rejected: [] });
  });

  it('accepts a plain Uint8Array as well as a Buffer', () => {
    const body = protobufBody(makeRealSpans().all);
    const copy = new Uint8Array(body.length);
    copy.set(body);
    expect(decodeProtobuf(copy).spans).toHaveLength(2);
    expect(decodeProtobuf(Buffer.from(body)).spans).toHaveLength(2);
  });

  it('reads fields in any order: a resource after its spans, a scope after its spans', () => {
    const spanBytes = encodeTraceRequestProtobuf({
      resourceSpans: [{ scopeSpans: [{ spans: [span()] }] }],
    });
    // Peel the request down to the encoded Span, then rebuild with fields in reverse order.
    const request = protoTypes().exportTraceServiceRequest.decode(spanBytes) as unknown as {
      resourceSpans: { scopeSpans: { spans: object[] }[] }[];
    };
    const encodedSpan = encodeMessage(
      'opentelemetry.proto.trace.v1.Span',
      request.resourceSpans[0]!.scopeSpans[0]!.spans[0]!,
    );
    const scope = encodeMessage('opentelemetry.proto.common.v1.InstrumentationScope', {
      name: 'late',
      version: '9',
    });
    const resource = encodeMessage('opentelemetry.proto.resource.v1.Resource', {
      attributes: [{ key: 'service.name', value: { stringValue: 'late-resource' } }],
    });
    const scopeSpans = Buffer.concat([lengthDelimited(2, encodedSpan), lengthDelimited(1, scope)]);
    const resourceSpans = Buffer.concat([lengthDelimited(2, scopeSpans), lengthDelimited(1, resource)]);
    const decoded = decodeProtobuf(lengthDelimited(1, resourceSpans));
    expect(decoded.rejected).toEqual([]);
    expect(decoded.spans[0]).toMatchObject({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      resource: { 'service.name': 'late-resource' },
      scope: { name: 'late', version: '9' },
    });
  });

  it('reads a repeated resource in full even after the first one was rejected', () => {
    const resource = (value: string) =>
      lengthDelimited(
        1,
        encodeMessage('opentelemetry.proto.resource.v1.Resource', {
          attributes: [{ key: 'blob', value: { stringValue: value } }],
        }),
      );
    const scopeSpans = lengthDelimited(
      2,
      encodeMessage('opentelemetry.proto.trace.v1.ScopeSpans', {
        spans: [{ traceId: Buffer.from(TRACE_ID, 'hex'), spanId: Buffer.from(SPAN_ID, 'hex') }],
      }),
    );
    const body = lengthDelimited(
      1,
      Buffer.concat([resource('x'.repeat(50)), resource('y'.repeat(60)), scopeSpans]),
    );
    expect(decodeTraceRequest(body, 'protobuf', { maxAttributeValueBytes: 10 })).toEqual({
      spans: [],
      rejected: [
        {
          traceId: TRACE_ID,
          spanId: SPAN_ID,
          reason: 'resource attribute "blob" is 50 bytes, over the 10-byte limit',
        },
      ],
    });
  });

  it('encodes OTLP/JSON-shaped requests, taking times as bigints too', () => {
    const encoded = (time: bigint) =>
      encodeTraceRequestProtobuf({
        resourceSpans: [
          { scopeSpans: [{ spans: [span({ startTimeUnixNano: time, endTimeUnixNano: time })] }] },
        ],
      });
    const latest = 9_223_372_036_854_775_807n; // the latest time Errata stores (2^63 - 1 ns)
    expect(decodeProtobuf(encoded(latest)).spans[0]).toMatchObject({
      startTimeUnixNano: latest,
      endTimeUnixNano: latest,
    });
    // The largest fixed64 is read whole, and refused as past what Errata stores.
    expect(decodeProtobuf(encoded(18_446_744_073_709_551_615n)).rejected[0]?.reason).toContain(
      '(18446744073709551615) is after the year 2262',
    );
  });

  it('treats the Profiles-only string_value_strindex as an empty value', () => {
    const body = encodeTraceRequestProtobuf({
      resourceSpans: [
        {
          scopeSpans: [
            { spans: [span({ attributes: [{ key: 'indexed', value: { stringValueStrindex: 4 } }] })] },
          ],
        },
      ],
    });
    expect(decodeProtobuf(body).spans[0]?.attributes).toEqual({ indexed: null });
  });

  it('throws OtlpDecodeError for a body cut off in the middle of a field', () => {
    const body = protobufBody(makeRealSpans().all);
    const truncated = body.subarray(0, Math.floor(body.length / 2));
    expect(() => decodeProtobuf(truncated)).toThrow(OtlpDecodeError);
    expect(() => decodeProtobuf(truncated)).toThrow(
      /^Body is not a valid protobuf ExportTraceServiceRequest: /,
    );
    expect(() => decodeProtobuf(body.subarray(0, body.length - 1))).toThrow(OtlpDecodeError);
  });

  it('throws OtlpDecodeError for random bytes and for JSON sent as protobuf', () => {
    expect(() => decodeProtobuf(noise(512, 0x9e3779b9))).toThrow(OtlpDecodeError);
    expect(() => decodeProtobuf(Buffer.from('{"resourceSpans":[]}'))).toThrow(OtlpDecodeError);
  });

  it('throws OtlpDecodeError for attribute values nested past the protobuf recursion limit', () => {
    // AnyValue{arrayValue: ArrayValue{values: [AnyValue{…}]}}, 200 levels deep.
    let value: Buffer = lengthDelimited(1, Buffer.from('leaf'));
    for (let i = 0; i < 200; i++) value = lengthDelimited(5, lengthDelimited(1, value));
    const keyValue = Buffer.concat([lengthDelimited(1, Buffer.from('deep')), lengthDelimited(2, value)]);
    const spanWithDeepAttribute = Buffer.concat([
      lengthDelimited(1, Buffer.from(TRACE_ID, 'hex')),
      lengthDelimited(2, Buffer.from(SPAN_ID, 'hex')),
      lengthDelimited(9, keyValue),
    ]);
    const body = lengthDelimited(1, lengthDelimited(2, lengthDelimited(2, spanWithDeepAttribute)));
    expect(() => decodeProtobuf(body)).toThrow(/max depth exceeded/);
    expect(() => decodeProtobuf(body)).toThrow(OtlpDecodeError);
  });
});
