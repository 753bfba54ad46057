import * as protobuf from 'protobufjs';
import { int64ToAttribute } from './int64';

export type Reader = protobuf.Reader;

/** protobufjs's own nesting limit, which protoc shares. */
const MAX_DEPTH = protobuf.Reader.recursionLimit;

export function createReader(buffer: Buffer): Reader {
  return protobuf.Reader.create(buffer);
}

/**
 * Narrows the reader to the length-delimited message that starts here, so a field that claims more
 * bytes than its message holds fails as a truncation. Returns the outer limit for `leave`.
 */
export function enter(reader: Reader, depth: number): number {
  if (depth > MAX_DEPTH) throw new Error('max depth exceeded');
  const length = reader.uint32();
  const end = reader.pos + length;
  if (end > reader.len) throw new RangeError(`index out of range: ${reader.pos} + ${length} > ${reader.len}`);
  const outer = reader.len;
  reader.len = end;
  return outer;
}

export function leave(reader: Reader, outer: number): void {
  reader.len = outer;
}

/** Unknown fields (events, links, flags, fields added upstream later) are skipped unread. */
export function skipField(reader: Reader, tag: number, depth: number): void {
  reader.skipType(tag & 7, depth, tag >>> 3);
}

/** Start offset of a length-delimited bytes field, leaving the reader after it. */
export function skipBytes(reader: Reader): number {
  const length = reader.uint32();
  const start = reader.pos;
  reader.skip(length);
  return start;
}

/**
 * int64 as an attribute value. Most are small and positive: up to 7 varint bytes (49 bits) sum
 * exactly in a double without allocating; longer ones (every negative number takes 10) go through
 * protobufjs's 64-bit path.
 */
export function readInt64Attribute(reader: Reader): number | string {
  const buf = reader.buf;
  const start = reader.pos;
  const limit = Math.min(reader.len, start + 7);
  let value = 0;
  let scale = 1;
  for (let pos = start; pos < limit; pos++) {
    const byte = buf[pos] as number;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) {
      reader.pos = pos + 1;
      return value;
    }
    scale *= 128;
  }
  const bits = reader.int64() as unknown as { low: number; high: number };
  return int64ToAttribute(bits.low, bits.high);
}
