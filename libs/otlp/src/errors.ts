/** The request body as a whole cannot be decoded: the caller should answer 400 Bad Request. */
export class OtlpDecodeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OtlpDecodeError';
  }
}

/**
 * One span (or every span under one resource or scope) is invalid. Thrown while converting and
 * caught per span, so a bad span never costs the rest of the batch.
 */
export class SpanRejection extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'SpanRejection';
  }
}

/** Only validation failures become rejections; anything else is a bug and must surface. */
export function rejectionReason(error: unknown): string {
  if (error instanceof SpanRejection) return error.reason;
  throw error;
}
