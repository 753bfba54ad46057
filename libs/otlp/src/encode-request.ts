import { asBuffer } from './buffers';
import { protoTypes } from './proto-root';

/**
 * An ExportTraceServiceRequest in its OTLP/JSON shape (lowerCamelCase keys, hex ids, int64 as
 * decimal strings, numbers or bigints, bytesValue as base64). The same object can be sent as JSON
 * with JSON.stringify (bigints aside) or as protobuf with `encodeTraceRequestProtobuf`.
 */
export interface OtlpJsonTraceRequest {
  readonly resourceSpans?: readonly unknown[];
}

const ID_KEYS = new Set(['traceId', 'spanId', 'parentSpanId']);

/**
 * Encodes an OTLP/JSON-shaped request as protobuf, for tests and benchmarks that need bodies the
 * OpenTelemetry SDK would never produce (invalid ids, missing times, huge attributes). Ids are
 * written as the bytes their hex spells, whatever their length, so malformed ids stay malformed.
 */
export function encodeTraceRequestProtobuf(request: OtlpJsonTraceRequest): Buffer {
  const type = protoTypes().exportTraceServiceRequest;
  return asBuffer(type.encode(type.fromObject(toProtobufShape(request) as object)).finish());
}

/** protobufjs's fromObject already takes base64 bytes, enum numbers and int64 strings; ids and bigints are not. */
function toProtobufShape(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(toProtobufShape);
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array) return value;
  const shaped: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    shaped[key] =
      ID_KEYS.has(key) && typeof field === 'string' ? Buffer.from(field, 'hex') : toProtobufShape(field);
  }
  return shaped;
}
