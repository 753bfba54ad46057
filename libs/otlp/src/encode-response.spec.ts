import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { describe, expect, it } from 'vitest';
import { encodeStatus, encodeTraceResponse } from './index';
import { protoTypes } from './proto-root';

const partial = { rejectedSpans: 2, errorMessage: '2 spans rejected: …' };

function decodeResponse(body: Buffer) {
  const type = protoTypes().exportTraceServiceResponse;
  return type.toObject(type.decode(body), { longs: String });
}

describe('encodeTraceResponse', () => {
  it('leaves partial_success unset on full success', () => {
    const protobuf = encodeTraceResponse('protobuf');
    expect(protobuf).toBeInstanceOf(Buffer);
    expect(protobuf).toHaveLength(0);
    expect(decodeResponse(protobuf)).toEqual({});
    expect(encodeTraceResponse('json').toString()).toBe('{}');
    expect(encodeTraceResponse('json', { rejectedSpans: 0, errorMessage: '' }).toString()).toBe('{}');
  });

  it('encodes a partial success in protobuf', () => {
    expect(decodeResponse(encodeTraceResponse('protobuf', partial))).toEqual({
      partialSuccess: { rejectedSpans: '2', errorMessage: partial.errorMessage },
    });
  });

  it('encodes a partial success in OTLP/JSON with int64 as a string', () => {
    const body = encodeTraceResponse('json', partial).toString('utf8');
    expect(JSON.parse(body)).toEqual({
      partialSuccess: { rejectedSpans: '2', errorMessage: partial.errorMessage },
    });
  });

  it('is understood by the OpenTelemetry exporters', () => {
    const fromProtobuf = ProtobufTraceSerializer.deserializeResponse(
      encodeTraceResponse('protobuf', partial),
    );
    expect(Number(fromProtobuf.partialSuccess?.rejectedSpans)).toBe(2);
    expect(fromProtobuf.partialSuccess?.errorMessage).toBe(partial.errorMessage);
    const fromJson = JsonTraceSerializer.deserializeResponse(encodeTraceResponse('json', partial));
    expect(Number(fromJson.partialSuccess?.rejectedSpans)).toBe(2);
  });

  it('refuses a negative or fractional count', () => {
    expect(() => encodeTraceResponse('json', { rejectedSpans: -1, errorMessage: 'x' })).toThrow(RangeError);
    expect(() => encodeTraceResponse('protobuf', { rejectedSpans: 1.5, errorMessage: 'x' })).toThrow(
      RangeError,
    );
  });
});

describe('encodeStatus', () => {
  it('encodes google.rpc.Status in protobuf', () => {
    const type = protoTypes().status;
    const decoded = type.toObject(type.decode(encodeStatus('protobuf', { code: 3, message: 'bad body' })));
    expect(decoded).toEqual({ code: 3, message: 'bad body' });
    expect(type.toObject(type.decode(encodeStatus('protobuf', { message: 'no code' })))).toEqual({
      message: 'no code',
    });
  });

  it('encodes google.rpc.Status in JSON, omitting an absent code', () => {
    expect(JSON.parse(encodeStatus('json', { code: 3, message: 'bad body' }).toString())).toEqual({
      code: 3,
      message: 'bad body',
    });
    expect(JSON.parse(encodeStatus('json', { message: 'no code' }).toString())).toEqual({
      message: 'no code',
    });
  });
});
