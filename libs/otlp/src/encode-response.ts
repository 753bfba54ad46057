import { asBuffer } from './buffers';
import { protoTypes } from './proto-root';
import type { OtlpEncoding } from './types';

export interface PartialSuccess {
  readonly rejectedSpans: number;
  readonly errorMessage: string;
}

/**
 * The 200 body. `partial_success` stays unset on full success, as the OTLP specification asks; a
 * partial success with nothing rejected and no message is the same thing.
 */
export function encodeTraceResponse(encoding: OtlpEncoding, partial?: PartialSuccess): Buffer {
  const hasPartial = partial !== undefined && (partial.rejectedSpans !== 0 || partial.errorMessage !== '');
  if (hasPartial && !(Number.isSafeInteger(partial.rejectedSpans) && partial.rejectedSpans >= 0)) {
    throw new RangeError(`rejectedSpans must be a non-negative integer (got ${partial.rejectedSpans})`);
  }
  if (encoding === 'json') {
    // OTLP/JSON writes int64 as a decimal string.
    const body = hasPartial
      ? {
          partialSuccess: {
            rejectedSpans: String(partial.rejectedSpans),
            errorMessage: partial.errorMessage,
          },
        }
      : {};
    return Buffer.from(JSON.stringify(body), 'utf8');
  }
  const type = protoTypes().exportTraceServiceResponse;
  const message = hasPartial
    ? { partialSuccess: { rejectedSpans: partial.rejectedSpans, errorMessage: partial.errorMessage } }
    : {};
  return asBuffer(type.encode(type.fromObject(message)).finish());
}

/** A google.rpc.Status, the body OTLP/HTTP prescribes for 4xx and 5xx answers. `code` may be omitted. */
export function encodeStatus(encoding: OtlpEncoding, status: { code?: number; message: string }): Buffer {
  const message =
    status.code === undefined ? { message: status.message } : { code: status.code, message: status.message };
  if (encoding === 'json') return Buffer.from(JSON.stringify(message), 'utf8');
  const type = protoTypes().status;
  return asBuffer(type.encode(type.fromObject(message)).finish());
}
