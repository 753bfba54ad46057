/**
 * Attribute keys repeat across every span of a batch (and across batches), so the decoder keeps
 * the strings it made for them. A cached key skips both the UTF-8 decode and V8's interning of a
 * fresh string on first use as a property name, which together were a third of protobuf decoding.
 * Direct-mapped on a hash of the bytes: a collision just replaces the entry.
 */
const SLOTS = 1024; // a power of two
const MAX_CACHED_KEY_BYTES = 64;

const slotBytes: (Buffer | undefined)[] = new Array<Buffer | undefined>(SLOTS);
const slotKeys: string[] = new Array<string>(SLOTS).fill('');

/** The key stored in buffer[start, end), decoded as UTF-8. */
export function attributeKey(buffer: Buffer, start: number, end: number): string {
  const length = end - start;
  if (length > MAX_CACHED_KEY_BYTES) return buffer.toString('utf8', start, end);
  // FNV-1a over the bytes.
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ (buffer[i] as number), 0x01000193);
  const slot = (hash ^ length) & (SLOTS - 1);
  const cached = slotBytes[slot];
  if (cached !== undefined && cached.length === length && sameBytes(cached, buffer, start)) {
    return slotKeys[slot] as string;
  }
  const key = buffer.toString('utf8', start, end);
  slotBytes[slot] = Buffer.from(buffer.subarray(start, end)); // a copy: the body is not retained
  slotKeys[slot] = key;
  return key;
}

function sameBytes(cached: Buffer, buffer: Buffer, start: number): boolean {
  for (let i = 0; i < cached.length; i++) if (cached[i] !== buffer[start + i]) return false;
  return true;
}
