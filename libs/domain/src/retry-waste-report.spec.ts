import { describe, expect, it } from 'vitest';

import { fact, MS, T0, TRACE } from './fixtures.spec-helper';
import { isoFromNs } from './report-order';
import type { CallFact, RetryLabel } from './retries';
import { nsToMs, RETRY_WASTE_SAMPLES, retryWasteReport } from './retry-waste-report';
import { RULES_VERSION } from './rules';

const reasons = (counts: Partial<Record<RetryLabel, number>>): Record<RetryLabel, number> => ({
  non_retryable: 0,
  blind_retry: 0,
  corrected: 0,
  recovery: 0,
  ignored_retry_after: 0,
  guess: 0,
  misclassified_empty: 0,
  repeated_empty: 0,
  refined: 0,
  ...counts,
});

/** The sample of the wasted retry `key`, started `startMs` after T0 (no agent names in these runs). */
const sample = (key: string, startMs: number, reason: RetryLabel) => ({
  traceId: TRACE,
  spanId: key,
  startTime: isoFromNs(T0 + BigInt(startMs) * MS),
  reason,
  agentName: null,
  agentId: null,
});

const s1 = (extra: Partial<CallFact>): Partial<CallFact> => ({ server: 'S1', ...extra });
const run2 = (extra: Partial<CallFact>): Partial<CallFact> => ({ runId: 'run-2', server: null, ...extra });

/** Every label once or more; durations chosen so every sum is checkable by hand (see the expectations). */
const calls: CallFact[] = [
  // run-1 / S1 / lookup_order: transient → transient → ok (recovered)
  fact('a', 0, 100, 'tool_error', 'transient', s1({})),
  fact('b', 200, 100, 'tool_error', 'transient', s1({})),
  fact('c', 400, 100, 'ok', null, s1({})),
  // run-1 / S1 / refund: business ×3 (unrecovered), one with tokens, one lasting 100.4 ms
  fact('r1', 1000, 100, 'tool_error', 'business', s1({ tool: 'refund' })),
  fact('r2', 1200, 250, 'tool_error', 'business', s1({ tool: 'refund', tokens: 40 })),
  fact(
    'r3',
    1600,
    0,
    'tool_error',
    'business',
    s1({ tool: 'refund', endNs: T0 + 1600n * MS + 100_400_000n }),
  ),
  // run-1 / S1 / search_docs: ok_empty → same query (repeated_empty) → new query ok (refined)
  fact('s1', 2000, 100, 'ok_empty', 'empty', s1({ tool: 'search_docs' })),
  fact('s2', 2200, 150, 'ok_empty', 'empty', s1({ tool: 'search_docs', tokens: 10 })),
  fact('s3', 2500, 100, 'ok', null, s1({ tool: 'search_docs', argsHash: 'h2' })),
  // run-1 / S1 / validate_address: validation → blind retry → corrected ok
  fact('v1', 3000, 100, 'tool_error', 'validation', s1({ tool: 'validate_address' })),
  fact('v2', 3200, 120, 'tool_error', 'validation', s1({ tool: 'validate_address' })),
  fact('v3', 3400, 100, 'ok', null, s1({ tool: 'validate_address', argsHash: 'h2' })),
  // run-2 / unknown server: an unrecovered guess, a misclassified empty, an ignored retry-after
  fact('u1', 0, 100, 'tool_error', 'unknown', run2({ tool: 'mystery' })),
  fact('u2', 200, 80, 'protocol_error', 'unknown', run2({ tool: 'mystery' })),
  fact('e1', 0, 100, 'tool_error', 'empty', run2({ tool: 'search_kb' })),
  fact('e2', 200, 60, 'tool_error', 'empty', run2({ tool: 'search_kb' })),
  fact('t1', 0, 100, 'tool_error', 'transient', run2({ retryAfterMs: 5000 })),
  fact('t2', 1100, 90, 'tool_error', 'transient', run2({})),
  fact('t3', 2000, 100, 'timeout', 'transient', run2({})),
];

const totals = {
  calls: 19,
  retries: 12,
  wastedRetries: 7,
  wastedMs: 850, // 250 + 100.4 + 150 + 120 + 80 + 60 + 90 = 850.4
  wastedTokens: 50,
  unrecoveredChains: 4, // r1, u1, e1, t1
};

describe('retryWasteReport', () => {
  it('given groupBy category, then retries count under the category of the call they retried', () => {
    expect(retryWasteReport(calls, { groupBy: 'category' })).toEqual({
      rulesVersion: RULES_VERSION,
      totals,
      groups: [
        {
          key: 'business',
          retries: 2,
          wastedRetries: 2,
          wastedMs: 350,
          wastedTokens: 40,
          unrecoveredChains: 1,
          reasons: reasons({ non_retryable: 2 }),
          samples: [sample('r3', 1600, 'non_retryable'), sample('r2', 1200, 'non_retryable')],
        },
        {
          key: 'empty',
          retries: 3,
          wastedRetries: 2,
          wastedMs: 210,
          wastedTokens: 10,
          unrecoveredChains: 1,
          reasons: reasons({ repeated_empty: 1, refined: 1, misclassified_empty: 1 }),
          // Wasted only: s3 refined the query.
          samples: [sample('s2', 2200, 'repeated_empty'), sample('e2', 200, 'misclassified_empty')],
        },
        {
          key: 'validation',
          retries: 2,
          wastedRetries: 1,
          wastedMs: 120,
          wastedTokens: 0,
          unrecoveredChains: 0,
          reasons: reasons({ blind_retry: 1, corrected: 1 }),
          samples: [sample('v2', 3200, 'blind_retry')],
        },
        {
          key: 'transient',
          retries: 4,
          wastedRetries: 1,
          wastedMs: 90,
          wastedTokens: 0,
          unrecoveredChains: 1, // the retry budget exhausted signal: t1 → t2 → t3 ended in a timeout
          reasons: reasons({ recovery: 3, ignored_retry_after: 1 }),
          samples: [sample('t2', 1100, 'ignored_retry_after')],
        },
        {
          key: 'unknown',
          retries: 1,
          wastedRetries: 1,
          wastedMs: 80,
          wastedTokens: 0,
          unrecoveredChains: 1,
          reasons: reasons({ guess: 1 }),
          samples: [sample('u2', 200, 'guess')],
        },
      ],
    });
  });

  it('given groupBy server, then a null server is "(unknown)"', () => {
    const report = retryWasteReport(calls, { groupBy: 'server' });
    expect(report.totals).toEqual(totals);
    expect(
      report.groups.map((g) => [
        g.key,
        g.server,
        g.retries,
        g.wastedRetries,
        g.wastedMs,
        g.wastedTokens,
        g.unrecoveredChains,
      ]),
    ).toEqual([
      ['S1', 'S1', 8, 4, 620, 50, 1],
      ['(unknown)', null, 4, 3, 230, 0, 3],
    ]);
  });

  it('given groupBy tool, then keys are server/tool', () => {
    const report = retryWasteReport(calls, { groupBy: 'tool' });
    expect(report.groups.map((g) => [g.key, g.server, g.tool, g.wastedMs])).toEqual([
      ['S1/refund', 'S1', 'refund', 350],
      ['S1/search_docs', 'S1', 'search_docs', 150],
      ['S1/validate_address', 'S1', 'validate_address', 120],
      ['(unknown)/lookup_order', null, 'lookup_order', 90],
      ['(unknown)/mystery', null, 'mystery', 80],
      ['(unknown)/search_kb', null, 'search_kb', 60],
      ['S1/lookup_order', 'S1', 'lookup_order', 0],
    ]);
    expect(retryWasteReport(calls, { groupBy: 'category' }).groups[0]).not.toHaveProperty('server');
  });

  it('given groupBy tool, then pairs whose keys read alike (names with "/") stay apart', () => {
    const slashed = [
      fact('a1', 0, 100, 'tool_error', 'business', { server: 'acme/files', tool: 'read' }),
      fact('a2', 200, 100, 'tool_error', 'business', { server: 'acme/files', tool: 'read' }),
      fact('b1', 0, 100, 'tool_error', 'business', { server: 'acme', tool: 'files/read', runId: 'run-2' }),
      fact('b2', 200, 150, 'tool_error', 'business', { server: 'acme', tool: 'files/read', runId: 'run-2' }),
      fact('c1', 0, 100, 'tool_error', 'business', { server: '(unknown)', tool: 'x', runId: 'run-3' }),
      fact('c2', 200, 100, 'tool_error', 'business', { server: '(unknown)', tool: 'x', runId: 'run-3' }),
      fact('d1', 0, 100, 'tool_error', 'business', { server: null, tool: 'x', runId: 'run-4' }),
      fact('d2', 200, 100, 'tool_error', 'business', { server: null, tool: 'x', runId: 'run-4' }),
    ];
    expect(
      retryWasteReport(slashed, { groupBy: 'tool' }).groups.map((g) => [g.key, g.server, g.tool, g.retries]),
    ).toEqual([
      ['acme/files/read', 'acme', 'files/read', 1],
      ['(unknown)/x', null, 'x', 1],
      ['(unknown)/x', '(unknown)', 'x', 1],
      ['acme/files/read', 'acme/files', 'read', 1],
    ]);
  });

  it('given more wasted retries than samples, then a group shows its latest, newest first, whatever the input order', () => {
    const tool = { tool: 'validate_address' };
    // One chain of six calls: five blind retries, b1 … b5 (b5 at 1,000 ms).
    const chain = Array.from({ length: 6 }, (_, i) =>
      fact(`b${i}`, i * 200, 100, 'tool_error', 'validation', tool),
    );
    // Another trace's chain whose retry c1 starts with b5: the later span id comes first.
    const other = { ...tool, traceId: 'f'.repeat(32), runId: 'run-9' };
    const otherChain = [
      fact('c0', 800, 100, 'tool_error', 'validation', other),
      fact('c1', 1000, 100, 'tool_error', 'validation', other),
    ];
    const groupsOf = (input: CallFact[]) => retryWasteReport(input, { groupBy: 'tool' }).groups;
    const [group] = groupsOf([...chain, ...otherChain]);
    expect(group?.wastedRetries).toBe(6);
    expect(group?.samples).toHaveLength(RETRY_WASTE_SAMPLES);
    expect(group?.samples.map((s) => s.spanId)).toEqual(['c1', 'b5', 'b4']);
    expect(group?.samples[0]?.traceId).toBe('f'.repeat(32));
    expect(groupsOf([...otherChain, ...chain].reverse())).toEqual(groupsOf([...chain, ...otherChain]));
  });

  it('given groupBy server or tool, then samples are those of the group, a null server apart from a named one', () => {
    const report = retryWasteReport(calls, { groupBy: 'tool' });
    const samplesOf = (key: string, server: string | null) =>
      report.groups.find((g) => g.key === key && g.server === server)?.samples.map((s) => s.spanId);
    expect(samplesOf('S1/refund', 'S1')).toEqual(['r3', 'r2']);
    expect(samplesOf('(unknown)/lookup_order', null)).toEqual(['t2']);
    expect(samplesOf('S1/lookup_order', 'S1')).toEqual([]);
    const byServer = retryWasteReport(calls, { groupBy: 'server' }).groups;
    expect(byServer.map((g) => [g.key, g.samples.map((s) => s.spanId)])).toEqual([
      ['S1', ['v2', 's2', 'r3']],
      ['(unknown)', ['t2', 'u2', 'e2']],
    ]);
  });

  it('sorts ties by wasted retries, then retries, then key', () => {
    const tie = [
      fact('x1', 0, 100, 'tool_error', 'permission', { tool: 'b' }),
      fact('x2', 200, 100, 'tool_error', 'permission', { tool: 'b' }),
      fact('y1', 0, 100, 'tool_error', 'business', { tool: 'a' }),
      fact('y2', 200, 100, 'tool_error', 'business', { tool: 'a' }),
      fact('z1', 0, 100, 'tool_error', 'transient', { tool: 'c' }),
      fact('z2', 200, 100, 'ok', null, { tool: 'c' }),
    ];
    expect(retryWasteReport(tie, { groupBy: 'category' }).groups.map((g) => g.key)).toEqual([
      'business',
      'permission',
      'transient',
    ]);
  });

  it('honours windowMs', () => {
    const spaced = [
      fact('a', 0, 100, 'tool_error', 'business'),
      fact('b', 60_100, 100, 'tool_error', 'business'),
    ];
    expect(retryWasteReport(spaced, { groupBy: 'category' }).totals.retries).toBe(1);
    expect(retryWasteReport(spaced, { groupBy: 'category', windowMs: 59_999 }).totals.retries).toBe(0);
  });

  it('given no calls, then zero totals and no groups', () => {
    expect(retryWasteReport([], { groupBy: 'server' })).toEqual({
      rulesVersion: RULES_VERSION,
      totals: { calls: 0, retries: 0, wastedRetries: 0, wastedMs: 0, wastedTokens: 0, unrecoveredChains: 0 },
      groups: [],
    });
  });

  it('is byte-identical for the same calls in any order', () => {
    let seed = 42;
    const random = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (const groupBy of ['category', 'server', 'tool'] as const) {
      const expected = JSON.stringify(retryWasteReport(calls, { groupBy }));
      for (let round = 0; round < 25; round++) {
        const shuffled = [...calls];
        for (let i = shuffled.length - 1; i > 0; i--) {
          const j = Math.floor(random() * (i + 1));
          [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
        }
        expect(JSON.stringify(retryWasteReport(shuffled, { groupBy }))).toBe(expected);
      }
    }
  });
});

describe('nsToMs', () => {
  it('rounds half up to whole milliseconds', () => {
    expect(nsToMs(0n)).toBe(0);
    expect(nsToMs(499_999n)).toBe(0);
    expect(nsToMs(500_000n)).toBe(1);
    expect(nsToMs(850_400_000n)).toBe(850);
  });
});
