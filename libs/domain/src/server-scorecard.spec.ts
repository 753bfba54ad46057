import { describe, expect, it } from 'vitest';
import type { CallFinding } from './call-findings';
import type { Outcome } from './events';
import { reportCall } from './fixtures.spec-helper';
import { contributionsInMemory, sumContributions, traceFactsOfCalls } from './report-contributions';
import { gradeOf, scorecardFromSums, serverScorecard } from './server-scorecard';

const call = (
  key: string,
  server: string | null,
  tool: string,
  outcome: Outcome,
  findings: CallFinding[] = [],
) =>
  reportCall(key, 0, outcome, outcome === 'ok' ? null : 'unknown', {
    server,
    tool,
    serverVersion: '2.0.0',
    findings,
  });

describe('gradeOf', () => {
  it.each([
    [0, 100, 'A'],
    [1, 200, 'B'],
    [1, 100, 'C'],
    [4, 100, 'C'],
    [5, 100, 'D'],
    [19, 100, 'D'],
    [20, 100, 'F'],
    [0, 0, 'A'],
  ] as const)('%i violating of %i calls → %s', (violating, calls, grade) => {
    expect(gradeOf(violating, calls)).toBe(grade);
  });
});

describe('serverScorecard', () => {
  it('scores every tool and server from the calls that violate a rule', () => {
    const untyped: CallFinding[] = [{ rule: 'untyped-error', evidence: 'source:none' }];
    const leaky: CallFinding[] = [...untyped, { rule: 'leaky-error', evidence: 'leak.path' }];
    const card = serverScorecard([
      call('a', 'orders', 'lookup', 'ok'),
      call('b', 'orders', 'lookup', 'tool_error', untyped),
      call('c', 'orders', 'search', 'ok'),
      call('d', 'orders', 'search', 'tool_error', leaky),
      call('e', 'files', 'read', 'ok'),
    ]);
    expect(card.servers.map((s) => [s.server, s.calls, s.failures, s.violatingCalls, s.grade])).toEqual([
      ['files', 1, 0, 0, 'A'],
      ['orders', 4, 2, 2, 'F'],
    ]);
    expect(card.servers[1]!.tools).toEqual([
      { tool: 'lookup', calls: 2, failures: 1, violatingCalls: 1, rules: { 'untyped-error': 1 }, grade: 'F' },
      {
        tool: 'search',
        calls: 2,
        failures: 1,
        violatingCalls: 1,
        rules: { 'untyped-error': 1, 'leaky-error': 1 },
        grade: 'F',
      },
    ]);
    expect(card.servers[1]!.versions).toEqual(['2.0.0']);
  });

  it('given a failure declared not retryable that its same-arguments retry recovered, then it counts as the tool violating retryable-mismatch', () => {
    const versioned = { server: 'orders', tool: 'lookup', serverVersion: '2.0.0' };
    const card = serverScorecard([
      reportCall('a', 0, 'tool_error', 'transient', { ...versioned, declaredRetryable: false }),
      reportCall('b', 200, 'ok', null, versioned),
    ]);
    expect(card.servers[0]!.tools).toEqual([
      {
        tool: 'lookup',
        calls: 2,
        failures: 1,
        violatingCalls: 1,
        rules: { 'retryable-mismatch': 1 },
        grade: 'F',
      },
    ]);
  });
});

describe('scorecardFromSums with many tools', () => {
  it('lists the tools with the most violating calls, then the most calls, then by name, up to toolLimit; the server figures count them all', () => {
    const untyped: CallFinding[] = [{ rule: 'untyped-error', evidence: 'source:none' }];
    const calls = [
      // quiet-N: one clean call each; busy: three clean calls; bad-a, bad-b: one violating call each, bad-b twice
      ...Array.from({ length: 60 }, (_, n) =>
        call(`q${n}`, 'orders', `quiet-${String(n).padStart(2, '0')}`, 'ok'),
      ),
      ...['b1', 'b2', 'b3'].map((key) => call(key, 'orders', 'busy', 'ok')),
      call('v1', 'orders', 'bad-a', 'tool_error', untyped),
      call('v2', 'orders', 'bad-b', 'tool_error', untyped),
      call('v3', 'orders', 'bad-b', 'tool_error', untyped),
    ];
    const sums = sumContributions(contributionsInMemory(traceFactsOfCalls(calls)));
    const [orders] = scorecardFromSums(sums, 4).servers;
    expect(orders).toMatchObject({ calls: 66, failures: 3, violatingCalls: 3, toolCount: 63 });
    expect(orders!.tools.map((tool) => tool.tool)).toEqual(['bad-b', 'bad-a', 'busy', 'quiet-00']);
    expect(orders!.tools[0]).toMatchObject({ violatingCalls: 2, rules: { 'untyped-error': 2 } });
    // By default 50 of them.
    expect(scorecardFromSums(sums).servers[0]!.tools).toHaveLength(50);
  });
});
