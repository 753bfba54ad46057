const TWO_POW_32 = 4294967296;
const SAFE_HIGH_LIMIT = 0x200000; // 2^21: |high| below this keeps high * 2^32 + low under 2^53

/** fixed64 nanosecond timestamps exceed 2^53, so they go straight to bigint, never through a double. */
export function uint64ToBigInt(low: number, high: number): bigint {
  return (BigInt(high >>> 0) << 32n) | BigInt(low >>> 0);
}

/** int64 attribute values: a number when exactly representable, else the exact decimal string. */
export function int64ToAttribute(low: number, high: number): number | string {
  const signedHigh = high | 0;
  if (signedHigh > -SAFE_HIGH_LIMIT && signedHigh < SAFE_HIGH_LIMIT) {
    return signedHigh * TWO_POW_32 + (low >>> 0);
  }
  return decimalInt64(BigInt.asIntN(64, (BigInt(high >>> 0) << 32n) | BigInt(low >>> 0)));
}

/** A number when it is a safe integer, else exact decimal text. */
export function decimalInt64(value: bigint): number | string {
  const asNumber = Number(value);
  return Number.isSafeInteger(asNumber) ? asNumber : value.toString();
}
