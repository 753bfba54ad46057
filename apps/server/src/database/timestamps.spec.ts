import { describe, expect, it } from 'vitest';
import { isoFromMicros, isoFromMicrosByDate } from './timestamps';

describe('isoFromMicros', () => {
  it('writes what Date writes, with the microseconds, across minute and day boundaries', () => {
    const boundaries = [
      0,
      59_999_999,
      60_000_000,
      Date.UTC(2026, 10, 30) * 1_000 - 1,
      Date.UTC(2026, 10, 30) * 1_000,
    ];
    for (const micros of boundaries) expect(isoFromMicros(micros)).toBe(isoFromMicrosByDate(micros));

    let state = 7;
    const random = () => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31), state / 2 ** 31);
    for (let i = 0; i < 20_000; i++) {
      // Clusters of nearby times (as in one request) and jumps across centuries, before and after 1970.
      const base = Math.floor((random() - 0.3) * 8e15);
      for (let j = 0; j < 5; j++) {
        const micros = base + Math.floor(random() * 180_000_000);
        expect(isoFromMicros(micros)).toBe(isoFromMicrosByDate(micros));
      }
    }
  });

  it('falls back to Date for years that need a sign and six digits', () => {
    // Beyond 2^53 µs (the year 2255) microseconds are no longer exact numbers: these only check the format.
    const farFuture = Date.UTC(10_000, 0, 1) * 1_000;
    const beforeYearZero = Date.UTC(-1, 0, 1) * 1_000;
    expect(isoFromMicros(farFuture)).toBe(isoFromMicrosByDate(farFuture));
    expect(isoFromMicros(farFuture)).toMatch(/^\+010000-01-01T00:00:00\.\d{6}Z$/);
    expect(isoFromMicros(beforeYearZero)).toBe(isoFromMicrosByDate(beforeYearZero));
    expect(isoFromMicros(beforeYearZero)).toMatch(/^-000001-01-01T00:00:00\.\d{6}Z$/);
  });

  it('keeps the cached minute correct when a call falls back in between', () => {
    const now = Date.UTC(2026, 10, 30, 12, 0, 5) * 1_000 + 42;
    expect(isoFromMicros(now)).toBe('2026-11-30T12:00:05.000042Z');
    isoFromMicros(Date.UTC(10_000, 0, 1) * 1_000);
    expect(isoFromMicros(now + 1)).toBe('2026-11-30T12:00:05.000043Z');
  });
});
