import { describe, expect, it } from 'vitest';
import type { ContributionRow } from '../repositories/rollup.repository';
import { contributionChanges } from './contribution-changes';

const row = (spanId: string, measures: Record<string, number>, part = 'call'): ContributionRow => ({
  projectId: 1,
  traceId: 'aa',
  spanId,
  kind: 'call',
  part,
  startMicros: 1_000,
  startNs: '1000000',
  server: 'orders',
  tool: 'lookup',
  serverVersion: null,
  category: null,
  evidence: null,
  agentName: null,
  agentId: null,
  runId: null,
  measures,
});
const stored = ({ startMicros: _, ...rest }: ContributionRow) => rest;

describe('contributionChanges', () => {
  it('writes what changed, came or went, and leaves rows equal in every column, measures in any order', () => {
    const before = [
      row('01', { calls: 1, failures: 1 }),
      row('02', { calls: 1 }),
      row('03', { calls: 1 }),
      row('03', { retries: 1 }, 'retry'),
    ];
    const after = [
      row('01', { failures: 1, calls: 1 }), // the same measures, another key order
      row('02', { calls: 1, escalations: 1 }), // changed
      row('03', { calls: 1 }),
      row('04', { calls: 1 }), // new
    ];
    const { gone, fresh } = contributionChanges(before.map(stored), after);
    expect(gone.map((r) => `${r.spanId} ${r.part}`)).toEqual(['02 call', '03 retry']);
    expect(fresh.map((r) => `${r.spanId} ${r.part}`)).toEqual(['02 call', '04 call']);
  });

  it('tells apart rows that differ in a dimension alone', () => {
    const { gone, fresh } = contributionChanges(
      [stored(row('01', { calls: 1 }))],
      [{ ...row('01', { calls: 1 }), agentName: 'support' }],
    );
    expect([gone.length, fresh.length]).toEqual([1, 1]);
  });
});
