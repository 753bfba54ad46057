import { fitsUtf8Bytes, type AttributeValue } from '@errata/domain';

/** Scalars other than strings count as their protobuf payload would: 8 bytes, or 1 for a boolean. */
const NUMBER_BYTES = 8;
const BOOLEAN_BYTES = 1;

/**
 * Size of one attribute value as stored: UTF-8 bytes of strings (bytes values are stored as base64
 * text and count as such), and for arrays and key-value lists the total of their keys and leaves.
 */
export function attributeValueBytes(value: AttributeValue): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value === 'number') return NUMBER_BYTES;
  if (typeof value === 'boolean') return BOOLEAN_BYTES;
  if (value === null) return 0;
  let total = 0;
  if (isArray(value)) {
    for (const item of value) total += attributeValueBytes(item);
    return total;
  }
  for (const key of Object.keys(value)) {
    total += Buffer.byteLength(key, 'utf8') + attributeValueBytes(value[key] ?? null);
  }
  return total;
}

export function attributeValueFits(value: AttributeValue, maxBytes: number): boolean {
  if (typeof value === 'string') return fitsUtf8Bytes(value, maxBytes);
  if (typeof value !== 'object' || value === null) return true;
  return attributeValueBytes(value) <= maxBytes;
}

// Array.isArray does not narrow readonly arrays out of a union.
function isArray(value: AttributeValue): value is readonly AttributeValue[] {
  return Array.isArray(value);
}
