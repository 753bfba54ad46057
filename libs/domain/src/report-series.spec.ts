import { describe, expect, it } from 'vitest';
import { reportCall } from './fixtures.spec-helper';
import { contributionsInMemory, sumContributions, traceFactsOfCalls } from './report-contributions';
import { seriesPointFromSums } from './report-series';

describe('seriesPointFromSums', () => {
  it('given a recovered transient retry and a wasted blind retry, gives the headline figures of the bucket', () => {
    const calls = [
      reportCall('c1', 0, 'tool_error', 'transient', { argsHash: 'a' }),
      reportCall('c2', 2_000, 'ok', null, { argsHash: 'a' }),
      reportCall('c3', 10_000, 'tool_error', 'validation', { argsHash: 'b', tool: 'refund' }),
      reportCall('c4', 10_500, 'tool_error', 'validation', { argsHash: 'b', tool: 'refund' }),
    ];
    const sums = sumContributions(contributionsInMemory(traceFactsOfCalls(calls)));
    const window = { from: new Date('2026-01-01T00:00:00Z'), to: new Date('2026-01-01T01:00:00Z') };
    expect(seriesPointFromSums(window, sums.calls, sums.reports)).toEqual({
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-01-01T01:00:00.000Z',
      calls: 4,
      failures: 3,
      failureRate: 0.75,
      retries: 2,
      wastedRetries: 1,
      wastedMs: 100,
      unrecoveredChains: 1,
      escalations: 0,
      avoidableEscalations: 0,
      subagentReports: 0,
      meanCoverage: null,
      wastedRetriesBy: { transient: 0, validation: 1 },
      wastedMsBy: { transient: 0, validation: 100 },
    });
    expect(seriesPointFromSums(window, sums.calls, sums.reports, 'tool').wastedRetriesBy).toEqual({
      'support-server/lookup_order': 0,
      'support-server/refund': 1,
    });
  });

  it('given two server/tool pairs whose keys read alike, adds their wasted retries up under that key', () => {
    const calls = [
      reportCall('a1', 0, 'tool_error', 'business', { server: 'acme/files', tool: 'read' }),
      reportCall('a2', 1_000, 'tool_error', 'business', { server: 'acme/files', tool: 'read' }),
      reportCall('b1', 0, 'tool_error', 'business', { server: 'acme', tool: 'files/read', traceId: 't2' }),
      reportCall('b2', 1_000, 'tool_error', 'business', {
        server: 'acme',
        tool: 'files/read',
        traceId: 't2',
      }),
    ];
    const sums = sumContributions(contributionsInMemory(traceFactsOfCalls(calls)));
    const window = { from: new Date('2026-01-01T00:00:00Z'), to: new Date('2026-01-01T01:00:00Z') };
    expect(seriesPointFromSums(window, sums.calls, sums.reports, 'tool').wastedRetriesBy).toEqual({
      'acme/files/read': 2,
    });
  });

  it('given an empty bucket, counts zero and leaves the rates null', () => {
    const window = { from: new Date(0), to: new Date(3_600_000) };
    expect(seriesPointFromSums(window, [], [])).toMatchObject({
      calls: 0,
      failureRate: null,
      meanCoverage: null,
      wastedRetriesBy: {},
    });
  });
});
