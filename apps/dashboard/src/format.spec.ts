import { describe, expect, it } from 'vitest';
import { formatDuration } from './format';

describe('formatDuration', () => {
  it('gives a duration under 10 ms its tenth, and a tiny one as under a tenth, not as nothing', () => {
    expect(formatDuration(0)).toBe('0 ms');
    expect(formatDuration(0.012)).toBe('< 0.1 ms');
    expect(formatDuration(0.4)).toBe('0.4 ms');
    expect(formatDuration(7.25)).toBe('7.3 ms');
    expect(formatDuration(12.4)).toBe('12 ms');
  });

  it('moves to the next unit where rounding would reach it', () => {
    expect(formatDuration(9.96)).toBe('10 ms');
    expect(formatDuration(999.4)).toBe('999 ms');
    expect(formatDuration(999.7)).toBe('1 s');
    expect(formatDuration(1_500)).toBe('1.5 s');
    expect(formatDuration(59_960)).toBe('1 min');
    expect(formatDuration(90_000)).toBe('1.5 min');
    expect(formatDuration(3_598_000)).toBe('1 h');
    expect(formatDuration(5_400_000)).toBe('1.5 h');
  });
});
