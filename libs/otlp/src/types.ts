import type { SpanRecord } from '@errata/domain';

export type OtlpEncoding = 'protobuf' | 'json';

/** A span that failed validation; the rest of its request is still accepted. */
export interface RejectedSpan {
  /** Lowercase hex, or null when the span's own trace id is unusable. */
  readonly traceId: string | null;
  /** Lowercase hex, or null when the span's own span id is unusable. */
  readonly spanId: string | null;
  /** Clear English, suitable for an OTLP partial-success message. */
  readonly reason: string;
}

export interface DecodedTraceRequest {
  readonly spans: SpanRecord[];
  readonly rejected: RejectedSpan[];
}

export interface DecodeOptions {
  /**
   * Largest accepted size of one attribute value, in bytes: UTF-8 length for strings, and the total
   * of keys and leaves for arrays and key-value lists. Default 1 MiB.
   */
  readonly maxAttributeValueBytes?: number;
}

export const DEFAULT_MAX_ATTRIBUTE_VALUE_BYTES = 1_048_576;
