/** A Buffer view of the same memory (no copy), for Node's native hex, base64 and UTF-8 codecs. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
