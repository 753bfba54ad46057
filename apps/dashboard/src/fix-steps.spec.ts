import type { Fix } from '@errata/domain';
import { describe, expect, it } from 'vitest';
import { fixProgress } from './fix-steps';

const suggested: Fix = {
  findingId: '0123456789abcdef0123',
  server: 'orders',
  tool: 'lookup',
  rule: 'untyped-error',
  state: 'suggested',
  badVersions: ['1.0.0'],
  suggestedAt: '2026-11-01T00:00:00.000Z',
  deliveredAt: null,
  acknowledgedAt: null,
  acknowledgedBy: null,
  verifiedAt: null,
  verifiedVersion: null,
  regressedAt: null,
};
const done = (fix: Fix) =>
  fixProgress(fix)
    .steps.filter((step) => step.done)
    .map((step) => step.step);

describe("a finding's fix, step by step", () => {
  it('marks only the steps that happened: verified by traffic, never delivered nor acknowledged', () => {
    const fix: Fix = { ...suggested, state: 'verified', verifiedAt: '2026-11-02T00:00:00.000Z' };
    expect(done(fix)).toEqual(['suggested', 'verified']);
    expect(fixProgress(fix).regression).toBeNull();
  });

  it('a regressed fix that was never delivered: not delivered, not acknowledged, verified, and regressed', () => {
    const fix: Fix = {
      ...suggested,
      state: 'regressed',
      verifiedAt: '2026-11-02T00:00:00.000Z',
      regressedAt: '2026-11-03T00:00:00.000Z',
    };
    expect(done(fix)).toEqual(['suggested', 'verified']);
    expect(fixProgress(fix).regression).toEqual({ at: '2026-11-03T00:00:00.000Z', reverified: false });
  });

  it('a regressed fix delivered again: still says it was verified, and that it regressed since', () => {
    const fix: Fix = {
      ...suggested,
      state: 'delivered',
      deliveredAt: '2026-11-04T00:00:00.000Z',
      verifiedAt: '2026-11-02T00:00:00.000Z',
      regressedAt: '2026-11-03T00:00:00.000Z',
    };
    expect(done(fix)).toEqual(['suggested', 'delivered', 'verified']);
    expect(fixProgress(fix).regression).toEqual({ at: '2026-11-03T00:00:00.000Z', reverified: false });
  });

  it('a fix verified again after its regression says so', () => {
    const fix: Fix = {
      ...suggested,
      state: 'verified',
      verifiedAt: '2026-11-05T00:00:00.000Z',
      regressedAt: '2026-11-03T00:00:00.000Z',
    };
    expect(fixProgress(fix).regression).toEqual({ at: '2026-11-03T00:00:00.000Z', reverified: true });
  });
});
