import { asBuffer } from './buffers';
import { SpanRejection } from './errors';

export const TRACE_ID_BYTES = 16;
export const SPAN_ID_BYTES = 8;

const HEX = /^[0-9a-fA-F]*$/;

/** A required id from protobuf bytes: exactly `byteLength` bytes and not all zeros. */
export function idFromBytes(bytes: Uint8Array, byteLength: number, field: string): string {
  if (bytes.length !== byteLength) {
    throw new SpanRejection(
      bytes.length === 0
        ? `${field} is missing (empty)`
        : `${field} must be ${byteLength} bytes (got ${bytes.length})`,
    );
  }
  if (isAllZeros(bytes)) throw new SpanRejection(`${field} is all zeros`);
  return bytesToHex(bytes);
}

/** A parent id from protobuf bytes: empty or all zeros means a root span. */
export function parentIdFromBytes(bytes: Uint8Array, field: string): string | null {
  if (bytes.length === 0) return null;
  if (bytes.length !== SPAN_ID_BYTES) {
    throw new SpanRejection(`${field} must be ${SPAN_ID_BYTES} bytes or empty (got ${bytes.length})`);
  }
  return isAllZeros(bytes) ? null : bytesToHex(bytes);
}

/** The id to report beside a rejection: only a valid one, never a guess. */
export function validIdFromBytesOrNull(bytes: Uint8Array, byteLength: number): string | null {
  return bytes.length === byteLength && !isAllZeros(bytes) ? bytesToHex(bytes) : null;
}

/** A required id from OTLP/JSON, which spells ids as case-insensitive hex, not proto3's base64. */
export function idFromHex(value: unknown, byteLength: number, field: string): string {
  if (value === undefined || value === null || value === '') {
    throw new SpanRejection(`${field} is missing (empty)`);
  }
  if (typeof value !== 'string') {
    throw new SpanRejection(`${field} must be a hex string (got ${typeof value})`);
  }
  if (value.length !== byteLength * 2 || !HEX.test(value)) {
    throw new SpanRejection(
      `${field} must be ${byteLength * 2} hex characters (got ${describeIdText(value, byteLength)})`,
    );
  }
  if (isAllZeroHex(value)) throw new SpanRejection(`${field} is all zeros`);
  return value.toLowerCase();
}

/** A parent id from OTLP/JSON: absent, empty or all zeros means a root span. */
export function parentIdFromHex(value: unknown, field: string): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') {
    throw new SpanRejection(`${field} must be a hex string (got ${typeof value})`);
  }
  if (value.length !== SPAN_ID_BYTES * 2 || !HEX.test(value)) {
    throw new SpanRejection(
      `${field} must be ${SPAN_ID_BYTES * 2} hex characters or empty (got ${describeIdText(value, SPAN_ID_BYTES)})`,
    );
  }
  return isAllZeroHex(value) ? null : value.toLowerCase();
}

export function validIdFromHexOrNull(value: unknown, byteLength: number): string | null {
  return typeof value === 'string' &&
    value.length === byteLength * 2 &&
    HEX.test(value) &&
    !isAllZeroHex(value)
    ? value.toLowerCase()
    : null;
}

function bytesToHex(bytes: Uint8Array): string {
  return asBuffer(bytes).toString('hex');
}

function isAllZeros(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

function isAllZeroHex(hex: string): boolean {
  for (let i = 0; i < hex.length; i++) if (hex.charCodeAt(i) !== 0x30) return false;
  return true;
}

/** Quotes what was sent, and recognises the usual mistake of sending proto3's base64 instead of hex. */
function describeIdText(value: string, byteLength: number): string {
  const shown = JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  const base64Length = Math.ceil(byteLength / 3) * 4;
  const looksBase64 = value.length === base64Length && /^[A-Za-z0-9+/]+={0,2}$/.test(value);
  return looksBase64 ? `${shown}; OTLP/JSON ids are hex, not base64` : shown;
}
