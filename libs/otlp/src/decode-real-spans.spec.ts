import type { SpanRecord } from '@errata/domain';
import { describe, expect, it } from 'vitest';
import { decodeTraceRequest, type OtlpEncoding } from './index';
import {
  END_NANOS,
  hexIds,
  jsonBody,
  makeRealSpans,
  protobufBody,
  START_NANOS,
  withAttributes,
} from './real-spans.fixture';

const bodies: Record<OtlpEncoding, typeof protobufBody> = { protobuf: protobufBody, json: jsonBody };

describe.each(['protobuf', 'json'] as const)(
  'decodeTraceRequest, %s bodies from the OTel serializers',
  (encoding) => {
    const serialize = bodies[encoding];

    function decodeOne(spans = makeRealSpans()): { parent: SpanRecord; child: SpanRecord } {
      const decoded = decodeTraceRequest(serialize(spans.all), encoding);
      expect(decoded.rejected).toEqual([]);
      expect(decoded.spans).toHaveLength(2);
      const parent = decoded.spans.find((s) => s.spanId === hexIds(spans.parent).spanId);
      const child = decoded.spans.find((s) => s.spanId === hexIds(spans.child).spanId);
      if (!parent || !child) throw new Error('span missing after decoding');
      return { parent, child };
    }

    it('keeps ids, parentage, kind, name and nanosecond times exactly', () => {
      const spans = makeRealSpans();
      const { parent, child } = decodeOne(spans);
      expect(parent.traceId).toBe(hexIds(spans.parent).traceId);
      expect(parent.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(parent.parentSpanId).toBeNull();
      expect(child.traceId).toBe(parent.traceId);
      expect(child.parentSpanId).toBe(parent.spanId);
      expect(parent.kind).toBe(3); // CLIENT: OTLP numbers are the API's SpanKind + 1
      expect(child.kind).toBe(1); // INTERNAL
      expect(parent.name).toBe('tools/call get_weather');
      expect(child.startTimeUnixNano).toBe(START_NANOS);
      expect(child.endTimeUnixNano).toBe(END_NANOS);
    });

    it('maps status, resource and scope', () => {
      const { parent, child } = decodeOne();
      expect(parent.status).toEqual({ code: 1, message: '' });
      expect(child.status).toEqual({ code: 2, message: 'upstream timed out' });
      expect(child.resource).toMatchObject({
        'service.name': 'agent-under-test',
        'service.instance.count': 3,
      });
      expect(child.resource).toBe(parent.resource);
      expect(child.scope).toEqual({ name: 'errata-tests', version: '1.2.3' });
    });

    it('maps every attribute type the API allows', () => {
      const { child } = decodeOne();
      expect(child.attributes).toEqual({
        'a.string': 'héllo ✓',
        'a.empty': '',
        'a.int': 42,
        'a.negative': -7,
        'a.double': 2.5,
        'a.true': true,
        'a.false': false,
        'a.strings': ['x', 'y'],
        'a.ints': [1, 2, 3],
        'a.doubles': [0.5, 1.5],
        'a.bools': [true, false],
      });
    });

    it('maps key-value lists, bytes, empty values and integers beyond 2^53', () => {
      const spans = makeRealSpans();
      const child = withAttributes(spans.child, {
        map: { a: 1, nested: { b: 'c' }, list: ['x', 2] },
        bytes: new Uint8Array([1, 2, 255]),
        nothing: null,
        big: 2 ** 60,
        negativeBig: -(2 ** 60),
        largestSafe: Number.MAX_SAFE_INTEGER,
      });
      const decoded = decodeTraceRequest(serialize([child]), encoding);
      expect(decoded.spans[0]?.attributes).toEqual({
        map: { a: 1, nested: { b: 'c' }, list: ['x', 2] },
        bytes: 'AQL/',
        nothing: null,
        big: '1152921504606846976',
        negativeBig: '-1152921504606846976',
        largestSafe: Number.MAX_SAFE_INTEGER,
      });
    });
  },
);
