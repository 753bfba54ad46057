import type { Attributes, SpanRecord } from '@errata/domain';
import { asBuffer } from './buffers';
import { OtlpDecodeError, rejectionReason, SpanRejection } from './errors';
import { idFromHex, parentIdFromHex, SPAN_ID_BYTES, TRACE_ID_BYTES, validIdFromHexOrNull } from './ids';
import { attributesFromJson } from './json-attributes';
import {
  describeJson,
  enumFromJson,
  isJsonObject,
  stringFromJson,
  uint64FromJson,
  type JsonObject,
} from './json-values';
import type { DecodedTraceRequest, RejectedSpan } from './types';
import { checkTimes } from './validate-span';

const TIME_FIELDS = { start: 'startTimeUnixNano', end: 'endTimeUnixNano' };
const UNSET_STATUS = { code: 0, message: '' };
const EMPTY_SCOPE = { name: '', version: '' };

const SPAN_KIND_NAMES: Readonly<Record<string, number>> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
};

const STATUS_CODE_NAMES: Readonly<Record<string, number>> = {
  STATUS_CODE_UNSET: 0,
  STATUS_CODE_OK: 1,
  STATUS_CODE_ERROR: 2,
};

/**
 * OTLP/JSON per the OTLP specification: lowerCamelCase keys only (snake_case keys are unknown
 * fields and, like every unknown field, ignored), hex ids, integer enums, int64 as string or number.
 * A malformed envelope (resourceSpans → scopeSpans → spans) fails the whole body; anything wrong
 * inside a resource, scope or span rejects only the spans it covers.
 */
export function decodeJsonTraceRequest(
  body: Uint8Array,
  maxAttributeValueBytes: number,
): DecodedTraceRequest {
  const request = parseBody(body);
  const spans: SpanRecord[] = [];
  const rejected: RejectedSpan[] = [];
  const resourceSpansList = arrayField(request, 'resourceSpans', 'resourceSpans');
  for (let r = 0; r < resourceSpansList.length; r++) {
    const resourceSpans = objectAt(resourceSpansList, r, 'resourceSpans');
    const path = `resourceSpans[${r}]`;
    let resource: Attributes = {};
    let resourceProblem: string | null = null;
    try {
      resource = resourceFromJson(resourceSpans.resource, maxAttributeValueBytes);
    } catch (error) {
      resourceProblem = rejectionReason(error);
    }
    const scopeSpansList = arrayField(resourceSpans, 'scopeSpans', `${path}.scopeSpans`);
    for (let s = 0; s < scopeSpansList.length; s++) {
      const scopeSpans = objectAt(scopeSpansList, s, `${path}.scopeSpans`);
      let scope: SpanRecord['scope'] = EMPTY_SCOPE;
      let problem = resourceProblem;
      try {
        scope = scopeFromJson(scopeSpans.scope);
      } catch (error) {
        const reason = rejectionReason(error);
        problem ??= reason;
      }
      for (const span of arrayField(scopeSpans, 'spans', `${path}.scopeSpans[${s}].spans`)) {
        if (problem !== null) {
          rejected.push(rejectedSpan(span, problem));
          continue;
        }
        try {
          spans.push(spanRecord(span, resource, scope, maxAttributeValueBytes));
        } catch (error) {
          rejected.push(rejectedSpan(span, rejectionReason(error)));
        }
      }
    }
  }
  return { spans, rejected };
}

function parseBody(body: Uint8Array): JsonObject {
  let text = asBuffer(body).toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new OtlpDecodeError(`Body is not valid JSON: ${detail}`, { cause: error });
  }
  if (!isJsonObject(parsed)) {
    throw new OtlpDecodeError(
      `OTLP/JSON body must be an ExportTraceServiceRequest object (got ${describeJson(parsed)})`,
    );
  }
  return parsed;
}

function arrayField(parent: JsonObject, key: string, path: string): readonly unknown[] {
  const value = parent[key];
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value;
  throw new OtlpDecodeError(`${path} must be an array (got ${describeJson(value)})`);
}

function objectAt(list: readonly unknown[], index: number, path: string): JsonObject {
  const value = list[index];
  if (isJsonObject(value)) return value;
  throw new OtlpDecodeError(`${path}[${index}] must be an object (got ${describeJson(value)})`);
}

function resourceFromJson(resource: unknown, maxAttributeValueBytes: number): Attributes {
  if (resource === undefined || resource === null) return {};
  if (!isJsonObject(resource)) {
    throw new SpanRejection(`resource must be an object (got ${describeJson(resource)})`);
  }
  return attributesFromJson(resource.attributes, 'resource attribute', maxAttributeValueBytes);
}

function scopeFromJson(scope: unknown): SpanRecord['scope'] {
  if (scope === undefined || scope === null) return EMPTY_SCOPE;
  if (!isJsonObject(scope)) throw new SpanRejection(`scope must be an object (got ${describeJson(scope)})`);
  return {
    name: stringFromJson(scope.name, 'scope.name'),
    version: stringFromJson(scope.version, 'scope.version'),
  };
}

function spanRecord(
  span: unknown,
  resource: Attributes,
  scope: SpanRecord['scope'],
  maxAttributeValueBytes: number,
): SpanRecord {
  if (!isJsonObject(span)) throw new SpanRejection(`span must be an object (got ${describeJson(span)})`);
  const traceId = idFromHex(span.traceId, TRACE_ID_BYTES, 'traceId');
  const spanId = idFromHex(span.spanId, SPAN_ID_BYTES, 'spanId');
  const parentSpanId = parentIdFromHex(span.parentSpanId, 'parentSpanId');
  const name = stringFromJson(span.name, 'name');
  const kind = enumFromJson(span.kind, SPAN_KIND_NAMES, 'kind');
  const startTimeUnixNano = uint64FromJson(span.startTimeUnixNano, 'startTimeUnixNano');
  const endTimeUnixNano = uint64FromJson(span.endTimeUnixNano, 'endTimeUnixNano');
  checkTimes(startTimeUnixNano, endTimeUnixNano, TIME_FIELDS);
  const attributes = attributesFromJson(span.attributes, 'attribute', maxAttributeValueBytes);
  return {
    traceId,
    spanId,
    parentSpanId,
    name,
    kind,
    startTimeUnixNano,
    endTimeUnixNano,
    attributes,
    status: statusFromJson(span.status),
    resource,
    scope,
  };
}

function statusFromJson(status: unknown): SpanRecord['status'] {
  if (status === undefined || status === null) return UNSET_STATUS;
  if (!isJsonObject(status))
    throw new SpanRejection(`status must be an object (got ${describeJson(status)})`);
  return {
    code: enumFromJson(status.code, STATUS_CODE_NAMES, 'status.code'),
    message: stringFromJson(status.message, 'status.message'),
  };
}

function rejectedSpan(span: unknown, reason: string): RejectedSpan {
  const object = isJsonObject(span) ? span : {};
  return {
    traceId: validIdFromHexOrNull(object.traceId, TRACE_ID_BYTES),
    spanId: validIdFromHexOrNull(object.spanId, SPAN_ID_BYTES),
    reason,
  };
}
