import { describe, expect, it } from 'vitest';
import { percentAxisInterval, valueAxisSplits } from './chart-layout';

describe('valueAxisSplits', () => {
  it("keeps ECharts' five intervals where there is room for them", () => {
    expect(valueAxisSplits(220, 1)).toBe(5);
    expect(valueAxisSplits(220, 3)).toBe(5);
  });

  it("splits a small chart's axis into fewer intervals, so that its labels do not touch", () => {
    // The overview's cards: 120 px.
    expect(valueAxisSplits(120, 1)).toBe(3);
    expect(valueAxisSplits(120, 2)).toBe(2);
  });

  it('never goes below two intervals', () => {
    expect(valueAxisSplits(40, 1)).toBe(2);
  });
});

describe('percentAxisInterval', () => {
  it('steps a 0–100 % axis so that its last label is 100 % and no label lands beside it', () => {
    for (const splits of [2, 3, 4, 5]) {
      const step = percentAxisInterval(splits);
      expect(1 / step).toBeLessThanOrEqual(Math.max(splits, 2));
      expect(Number.isInteger(Math.round((1 / step) * 1e9) / 1e9)).toBe(true);
    }
    expect(percentAxisInterval(3)).toBe(0.5);
    expect(percentAxisInterval(5)).toBe(0.2);
  });
});
