/**
 * One span as received over OTLP, after decoding and id validation, before any interpretation.
 * `@errata/otlp` produces these; `normalizeSpan` turns the relevant ones into events.
 */
export type AttributeValue =
  string | number | boolean | null | readonly AttributeValue[] | { readonly [key: string]: AttributeValue };

export type Attributes = Readonly<Record<string, AttributeValue>>;

/** OTLP SpanKind numbers (trace.proto). */
export const SpanKind = {
  UNSPECIFIED: 0,
  INTERNAL: 1,
  SERVER: 2,
  CLIENT: 3,
  PRODUCER: 4,
  CONSUMER: 5,
} as const;

/** OTLP Status.code numbers. */
export const StatusCode = { UNSET: 0, OK: 1, ERROR: 2 } as const;

export interface SpanRecord {
  /** 32 lowercase hex characters, never all zeros. */
  readonly traceId: string;
  /** 16 lowercase hex characters, never all zeros. */
  readonly spanId: string;
  /** 16 lowercase hex characters, or null for a root span. */
  readonly parentSpanId: string | null;
  readonly name: string;
  readonly kind: number;
  /** Nanoseconds since the Unix epoch, exact. */
  readonly startTimeUnixNano: bigint;
  readonly endTimeUnixNano: bigint;
  readonly attributes: Attributes;
  readonly status: { readonly code: number; readonly message: string };
  /** Resource attributes (shared by every span of one ResourceSpans). */
  readonly resource: Attributes;
  readonly scope: { readonly name: string; readonly version: string };
}
