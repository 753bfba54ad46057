import { describe, expect, it } from 'vitest';
import { counted, formatDuration } from './format';

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

describe('counted', () => {
  it('gives one thing the singular, and none or many the plural (its own, when it is not the singular + "s")', () => {
    expect(counted(1, 'item')).toBe('1 item');
    expect(counted(0, 'item')).toBe('0 items');
    expect(counted(12_345, 'agent run')).toBe('12,345 agent runs');
    expect(counted(1, 'tool with misclassified results', 'tools with misclassified results')).toBe(
      '1 tool with misclassified results',
    );
    expect(counted(2, 'tool with misclassified results', 'tools with misclassified results')).toBe(
      '2 tools with misclassified results',
    );
  });
});
