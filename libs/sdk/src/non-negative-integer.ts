/** A count the host passed: a non-negative safe integer (a larger one would not survive as an int64 attribute). */
export const nonNegativeInteger = (value: unknown): number | null =>
  Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : null;
