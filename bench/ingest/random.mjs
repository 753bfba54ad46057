// Small deterministic PRNG (mulberry32): the same data every invocation. One module-wide stream, so the generated
// bodies depend only on the settings, not on which module asked for a number first.
let seed = 0x5eed_e77a;
export function random() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
export const pick = (items) => items[Math.floor(random() * items.length)];
export const int = (min, max) => min + Math.floor(random() * (max - min + 1));
export const hex = (bytes) => {
  let out = '';
  for (let i = 0; i < bytes; i++)
    out += Math.floor(random() * 256)
      .toString(16)
      .padStart(2, '0');
  return out;
};
