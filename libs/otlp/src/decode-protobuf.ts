import type { Attributes, SpanRecord } from '@errata/domain';
import type { MutableAttributes } from './attribute-object';
import { asBuffer } from './buffers';
import { OtlpDecodeError, rejectionReason, SpanRejection } from './errors';
import { idFromBytes, parentIdFromBytes, SPAN_ID_BYTES, TRACE_ID_BYTES, validIdFromBytesOrNull } from './ids';
import { uint64ToBigInt } from './int64';
import { readKeyValue } from './protobuf-attributes';
import { createReader, enter, leave, skipBytes, skipField, type Reader } from './protobuf-reader';
import type { DecodedTraceRequest, RejectedSpan } from './types';
import { checkTimes } from './validate-span';
import { wireLayout, type WireLayout } from './wire-layout';

const TIME_FIELDS = { start: 'start_time_unix_nano', end: 'end_time_unix_nano' };
const UNSET_STATUS = { code: 0, message: '' };
/** Byte range [0, 0): a field that never appeared reads as empty. */
const EMPTY = 0;

/** A span as read off the wire, before validation; ids are byte ranges into the body. */
interface WireSpan {
  traceIdStart: number;
  traceIdEnd: number;
  spanIdStart: number;
  spanIdEnd: number;
  parentSpanIdStart: number;
  parentSpanIdEnd: number;
  name: string;
  kind: number;
  startLow: number;
  startHigh: number;
  endLow: number;
  endHigh: number;
  attributes: MutableAttributes;
  status: { code: number; message: string } | null;
  scope: { name: string; version: string };
  /** Why the first oversized attribute is too large. */
  attributeProblem: string | null;
}

interface SizeLimit {
  readonly owner: string;
  readonly maxBytes: number;
}

/**
 * Walks the ExportTraceServiceRequest with protobufjs's Reader straight into SpanRecords, using
 * tags taken from the pinned .proto files. Decoding into protobufjs message objects first and
 * converting them afterwards allocated two objects per attribute and cost about twice as long.
 */
export function decodeProtobufTraceRequest(
  body: Uint8Array,
  maxAttributeValueBytes: number,
): DecodedTraceRequest {
  // A Buffer gives protobufjs's BufferReader, which decodes UTF-8 natively.
  const buffer = asBuffer(body);
  const layout = wireLayout();
  const result = { spans: [] as SpanRecord[], rejected: [] as RejectedSpan[] };
  const reader = createReader(buffer);
  try {
    while (reader.pos < reader.len) {
      const tag = reader.uint32();
      if (tag === layout.request.resourceSpans) {
        readResourceSpans(reader, layout, buffer, maxAttributeValueBytes, result);
      } else {
        skipField(reader, tag, 0);
      }
    }
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new OtlpDecodeError(`Body is not a valid protobuf ExportTraceServiceRequest: ${detail}`, {
      cause: error,
    });
  }
  return result;
}

/** The resource may follow its spans on the wire, so spans are finished once the message ends. */
function readResourceSpans(
  reader: Reader,
  layout: WireLayout,
  buffer: Buffer,
  maxAttributeValueBytes: number,
  result: { spans: SpanRecord[]; rejected: RejectedSpan[] },
): void {
  const outer = enter(reader, 1);
  const resource: MutableAttributes = {};
  let resourceProblem: string | null = null;
  const spanLimit = { owner: 'attribute', maxBytes: maxAttributeValueBytes };
  const wireSpans: WireSpan[] = [];
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === layout.resourceSpans.scopeSpans) readScopeSpans(reader, layout, spanLimit, wireSpans);
    else if (tag === layout.resourceSpans.resource) {
      const limit = { owner: 'resource attribute', maxBytes: maxAttributeValueBytes };
      // Read unconditionally: `??=` would skip the call, and its bytes, after a first problem.
      const problem = readResource(reader, layout, resource, limit);
      resourceProblem ??= problem;
    } else skipField(reader, tag, 1);
  }
  leave(reader, outer);

  for (const wireSpan of wireSpans) {
    try {
      if (resourceProblem !== null) throw new SpanRejection(resourceProblem);
      result.spans.push(spanRecord(wireSpan, buffer, resource));
    } catch (error) {
      result.rejected.push({
        traceId: validIdFromBytesOrNull(
          buffer.subarray(wireSpan.traceIdStart, wireSpan.traceIdEnd),
          TRACE_ID_BYTES,
        ),
        spanId: validIdFromBytesOrNull(
          buffer.subarray(wireSpan.spanIdStart, wireSpan.spanIdEnd),
          SPAN_ID_BYTES,
        ),
        reason: rejectionReason(error),
      });
    }
  }
}

/** Returns why the first oversized resource attribute is too large, or null. */
function readResource(
  reader: Reader,
  layout: WireLayout,
  target: MutableAttributes,
  limit: SizeLimit,
): string | null {
  const outer = enter(reader, 2);
  let problem: string | null = null;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === layout.resource.attributes) {
      const attributeProblem = readKeyValue(reader, layout, target, 3, limit);
      problem ??= attributeProblem;
    } else skipField(reader, tag, 2);
  }
  leave(reader, outer);
  return problem;
}

function readScopeSpans(reader: Reader, layout: WireLayout, limit: SizeLimit, wireSpans: WireSpan[]): void {
  const outer = enter(reader, 2);
  // Shared by this message's spans and filled in wherever the scope appears among them.
  const scope = { name: '', version: '' };
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === layout.scopeSpans.spans) wireSpans.push(readSpan(reader, layout, limit, scope));
    else if (tag === layout.scopeSpans.scope) readScope(reader, layout, scope);
    else skipField(reader, tag, 2);
  }
  leave(reader, outer);
}

function readScope(reader: Reader, layout: WireLayout, scope: { name: string; version: string }): void {
  const outer = enter(reader, 3);
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === layout.scope.name) scope.name = reader.string();
    else if (tag === layout.scope.version) scope.version = reader.string();
    else skipField(reader, tag, 3);
  }
  leave(reader, outer);
}

function readSpan(
  reader: Reader,
  layout: WireLayout,
  limit: SizeLimit,
  scope: { name: string; version: string },
): WireSpan {
  const tags = layout.span;
  const outer = enter(reader, 3);
  const span: WireSpan = {
    traceIdStart: EMPTY,
    traceIdEnd: EMPTY,
    spanIdStart: EMPTY,
    spanIdEnd: EMPTY,
    parentSpanIdStart: EMPTY,
    parentSpanIdEnd: EMPTY,
    name: '',
    kind: 0,
    startLow: 0,
    startHigh: 0,
    endLow: 0,
    endHigh: 0,
    attributes: {},
    status: null,
    scope,
    attributeProblem: null,
  };
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === tags.attributes) {
      const problem = readKeyValue(reader, layout, span.attributes, 4, limit);
      span.attributeProblem ??= problem;
    } else if (tag === tags.traceId) {
      span.traceIdStart = skipBytes(reader);
      span.traceIdEnd = reader.pos;
    } else if (tag === tags.spanId) {
      span.spanIdStart = skipBytes(reader);
      span.spanIdEnd = reader.pos;
    } else if (tag === tags.parentSpanId) {
      span.parentSpanIdStart = skipBytes(reader);
      span.parentSpanIdEnd = reader.pos;
    } else if (tag === tags.startTimeUnixNano) {
      span.startLow = reader.fixed32();
      span.startHigh = reader.fixed32();
    } else if (tag === tags.endTimeUnixNano) {
      span.endLow = reader.fixed32();
      span.endHigh = reader.fixed32();
    } else if (tag === tags.name) span.name = reader.string();
    else if (tag === tags.kind) span.kind = reader.int32();
    else if (tag === tags.status) span.status = readStatus(reader, layout);
    else skipField(reader, tag, 3);
  }
  leave(reader, outer);
  return span;
}

function readStatus(reader: Reader, layout: WireLayout): { code: number; message: string } {
  const outer = enter(reader, 4);
  const status = { code: 0, message: '' };
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === layout.status.code) status.code = reader.int32();
    else if (tag === layout.status.message) status.message = reader.string();
    else skipField(reader, tag, 4);
  }
  leave(reader, outer);
  return status;
}

function spanRecord(span: WireSpan, buffer: Buffer, resource: Attributes): SpanRecord {
  const traceId = idFromBytes(
    buffer.subarray(span.traceIdStart, span.traceIdEnd),
    TRACE_ID_BYTES,
    'trace_id',
  );
  const spanId = idFromBytes(buffer.subarray(span.spanIdStart, span.spanIdEnd), SPAN_ID_BYTES, 'span_id');
  const parentSpanId = parentIdFromBytes(
    buffer.subarray(span.parentSpanIdStart, span.parentSpanIdEnd),
    'parent_span_id',
  );
  const startTimeUnixNano = uint64ToBigInt(span.startLow, span.startHigh);
  const endTimeUnixNano = uint64ToBigInt(span.endLow, span.endHigh);
  checkTimes(startTimeUnixNano, endTimeUnixNano, TIME_FIELDS);
  if (span.attributeProblem !== null) throw new SpanRejection(span.attributeProblem);
  return {
    traceId,
    spanId,
    parentSpanId,
    name: span.name,
    kind: span.kind,
    startTimeUnixNano,
    endTimeUnixNano,
    attributes: span.attributes,
    status: span.status ?? UNSET_STATUS,
    resource,
    scope: span.scope,
  };
}
