import * as protobuf from 'protobufjs';
import { protoTypes } from './proto-root';

/**
 * The protobuf tags (field number << 3 | wire type) the request decoder switches on, read from
 * the pinned .proto files rather than written down a second time, so the files stay the one
 * source of truth for the wire format.
 */
export interface WireLayout {
  readonly request: { readonly resourceSpans: number };
  readonly resourceSpans: { readonly resource: number; readonly scopeSpans: number };
  readonly resource: { readonly attributes: number };
  readonly scopeSpans: { readonly scope: number; readonly spans: number };
  readonly scope: { readonly name: number; readonly version: number };
  readonly span: {
    readonly traceId: number;
    readonly spanId: number;
    readonly parentSpanId: number;
    readonly name: number;
    readonly kind: number;
    readonly startTimeUnixNano: number;
    readonly endTimeUnixNano: number;
    readonly attributes: number;
    readonly status: number;
  };
  readonly status: { readonly message: number; readonly code: number };
  readonly keyValue: { readonly key: number; readonly value: number };
  readonly anyValue: {
    readonly stringValue: number;
    readonly boolValue: number;
    readonly intValue: number;
    readonly doubleValue: number;
    readonly arrayValue: number;
    readonly kvlistValue: number;
    readonly bytesValue: number;
    readonly stringValueStrindex: number;
  };
  readonly arrayValue: { readonly values: number };
  readonly kvlistValue: { readonly values: number };
}

let layout: WireLayout | undefined;

export function wireLayout(): WireLayout {
  layout ??= readWireLayout();
  return layout;
}

function readWireLayout(): WireLayout {
  const request = protoTypes().exportTraceServiceRequest;
  const type = (name: string) => request.root.lookupType(name);
  const common = (name: string) => type(`opentelemetry.proto.common.v1.${name}`);
  const trace = (name: string) => type(`opentelemetry.proto.trace.v1.${name}`);
  const tags = <K extends string>(message: protobuf.Type, names: readonly K[]) =>
    Object.fromEntries(names.map((name) => [name, tagOf(message, name)])) as Record<K, number>;
  return {
    request: tags(request, ['resourceSpans']),
    resourceSpans: tags(trace('ResourceSpans'), ['resource', 'scopeSpans']),
    resource: tags(type('opentelemetry.proto.resource.v1.Resource'), ['attributes']),
    scopeSpans: tags(trace('ScopeSpans'), ['scope', 'spans']),
    scope: tags(common('InstrumentationScope'), ['name', 'version']),
    span: tags(trace('Span'), [
      'traceId',
      'spanId',
      'parentSpanId',
      'name',
      'kind',
      'startTimeUnixNano',
      'endTimeUnixNano',
      'attributes',
      'status',
    ]),
    status: tags(trace('Status'), ['message', 'code']),
    keyValue: tags(common('KeyValue'), ['key', 'value']),
    anyValue: tags(common('AnyValue'), [
      'stringValue',
      'boolValue',
      'intValue',
      'doubleValue',
      'arrayValue',
      'kvlistValue',
      'bytesValue',
      'stringValueStrindex',
    ]),
    arrayValue: tags(common('ArrayValue'), ['values']),
    kvlistValue: tags(common('KeyValueList'), ['values']),
  };
}

const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

const WIRE_TYPES: Readonly<Record<string, number>> = {
  string: LEN,
  bytes: LEN,
  bool: VARINT,
  int32: VARINT,
  sint32: VARINT,
  int64: VARINT,
  uint32: VARINT,
  uint64: VARINT,
  fixed64: I64,
  double: I64,
  fixed32: I32,
};

function tagOf(message: protobuf.Type, fieldName: string): number {
  const field = message.fields[fieldName];
  if (!field) throw new Error(`${message.fullName} has no field ${fieldName} in the pinned .proto files`);
  field.resolve();
  const wireType = field.resolvedType
    ? field.resolvedType instanceof protobuf.Enum
      ? VARINT
      : LEN
    : WIRE_TYPES[field.type];
  if (wireType === undefined) throw new Error(`unexpected field type ${field.type} for ${fieldName}`);
  return ((field.id << 3) | wireType) >>> 0;
}
