import { describe, expect, it } from 'vitest';
import { fact } from './fixtures.spec-helper';
import { subagentCoverageReport, type SubagentReportFact } from './subagent-coverage-report';

const report = (key: string, init: Partial<SubagentReportFact> = {}): SubagentReportFact => ({
  key,
  runId: 'sub-1',
  status: 'partial',
  completed: null,
  total: null,
  category: null,
  attempted: null,
  alternatives: null,
  partialResults: null,
  ...init,
});

/** Seed 003's web-search subagent: six of eight queries, all four elements. */
const SEED_003_PARTIAL = report('seed', {
  status: 'partial',
  completed: 6,
  total: 8,
  category: 'transient',
  attempted: [
    '3 retries with exponential backoff (1s, 2s, 4s)',
    'fallback to cached results — none available',
  ],
  partialResults: '{"completedQueries":6,"totalQueries":8}',
  alternatives: ['proceed with the 6 completed queries and flag reduced coverage'],
});

const SUBAGENT_RUNS = new Set(['sub-1', 'sub-2']);

describe('coverage', () => {
  it('mean and distribution of completed / total, over reports that carry both', () => {
    const result = subagentCoverageReport(
      [
        SEED_003_PARTIAL,
        report('full', { status: 'complete', completed: 3, total: 3 }),
        report('none', { status: 'failed', completed: 0, total: 4 }),
        report('no-numbers', { status: 'partial' }),
        report('zero-total', { status: 'partial', completed: 0, total: 0 }),
      ],
      [],
      SUBAGENT_RUNS,
    );
    expect(result).toMatchObject({ reports: 5, complete: 1, partial: 3, failed: 1 });
    expect(result.meanCoverage).toBeCloseTo((0.75 + 1 + 0) / 3, 12);
    expect(result.coverageDistribution).toEqual({ '0-25': 1, '25-50': 0, '50-75': 0, '75-100': 1, '100': 1 });
  });

  it('no report with both numbers: mean null', () => {
    expect(subagentCoverageReport([report('a')], [], SUBAGENT_RUNS).meanCoverage).toBeNull();
  });
});

describe('propagation completeness (the four elements of a failure report)', () => {
  it('seed 003 carries all four; a bare failure carries none; the most missing element is named', () => {
    const result = subagentCoverageReport(
      [
        SEED_003_PARTIAL,
        report('bare', { status: 'failed' }),
        report('no-alternatives', { ...SEED_003_PARTIAL, key: 'no-alternatives', alternatives: [] }),
        report('complete', { status: 'complete' }),
      ],
      [],
      SUBAGENT_RUNS,
    );
    expect(result.propagationCompleteness).toBeCloseTo(1 / 3, 12);
    expect(result.missingElements).toEqual({ category: 1, attempted: 1, partialResults: 1, alternatives: 2 });
    expect(result.mostMissingElement).toBe('alternatives');
  });

  it('a partial-results count of 0 is carried; nothing missing → no most-missing element', () => {
    const result = subagentCoverageReport(
      [report('zero', { ...SEED_003_PARTIAL, key: 'zero', partialResults: 0 })],
      [],
      SUBAGENT_RUNS,
    );
    expect(result).toMatchObject({ propagationCompleteness: 1, mostMissingElement: null });
  });
});

describe('local absorption and silent partials', () => {
  const calls = [
    // sub-1: a rate-limited source, retried and recovered (absorbed).
    fact('s1a', 0, 100, 'tool_error', 'transient', { runId: 'sub-1', tool: 'search_web' }),
    fact('s1b', 200, 100, 'ok', null, { runId: 'sub-1', tool: 'search_web' }),
    // sub-2: a timeout never recovered.
    fact('s2a', 0, 100, 'timeout', 'transient', { runId: 'sub-2', tool: 'search_news' }),
    // the coordinator's own transient failure does not count.
    fact('c1', 0, 100, 'tool_error', 'transient', { runId: 'coordinator' }),
  ];

  it('transient failures inside subagent runs that a later call recovered / all of them', () => {
    const result = subagentCoverageReport([], calls, SUBAGENT_RUNS);
    expect(result).toMatchObject({
      transientFailuresInSubagents: 2,
      absorbedTransientFailures: 1,
      localAbsorptionRate: 0.5,
    });
  });

  it('a complete report in a run with an unrecovered failure is a silent partial; in a recovered run it is not', () => {
    const result = subagentCoverageReport(
      [
        report('honest', { runId: 'sub-1', status: 'complete' }),
        report('silent', { runId: 'sub-2', status: 'complete' }),
      ],
      calls,
      SUBAGENT_RUNS,
    );
    expect(result.silentPartials).toBe(1);
  });

  it('given a subagent failure whose hinted retry by the coordinator recovered it, does not count it as absorbed locally', () => {
    // Given: sub-1 hits a rate limit and hands back; the coordinator retries the same search itself and succeeds.
    const handedBack = [
      fact('s1a', 0, 100, 'tool_error', 'transient', { runId: 'sub-1', tool: 'search_web' }),
      fact('c1', 200, 100, 'ok', null, { runId: 'coordinator', tool: 'search_web', retryOf: 's1a' }),
    ];
    // When: the report is computed. Then: the failure is a subagent transient failure, recovered but not absorbed.
    expect(subagentCoverageReport([], handedBack, SUBAGENT_RUNS)).toMatchObject({
      transientFailuresInSubagents: 1,
      absorbedTransientFailures: 0,
      localAbsorptionRate: 0,
    });
  });

  it('given a chain the coordinator failed to retry before the subagent itself recovered it, counts the subagent failure as absorbed', () => {
    // Given: sub-1 fails, the coordinator's hinted retry fails too, then sub-1 retries and succeeds.
    const recoveredInRun = [
      fact('s1a', 0, 100, 'tool_error', 'transient', { runId: 'sub-1', tool: 'search_web' }),
      fact('c1', 200, 100, 'tool_error', 'transient', { runId: 'coordinator', retryOf: 's1a' }),
      fact('s1b', 400, 100, 'ok', null, { runId: 'sub-1', tool: 'search_web', retryOf: 'c1' }),
    ];
    // When / then: the recovering call is in the failure's own run.
    expect(subagentCoverageReport([], recoveredInRun, SUBAGENT_RUNS)).toMatchObject({
      transientFailuresInSubagents: 1,
      absorbedTransientFailures: 1,
      localAbsorptionRate: 1,
    });
  });

  describe('failures in nested subagent runs', () => {
    // sub-1 started sub-1-1, which started sub-1-1-1; the coordinator started sub-1 and sub-2.
    const parentRuns = new Map([
      ['sub-1', 'coordinator'],
      ['sub-2', 'coordinator'],
      ['sub-1-1', 'sub-1'],
      ['sub-1-1-1', 'sub-1-1'],
    ]);
    const nestedRuns = new Set(['sub-1', 'sub-2', 'sub-1-1', 'sub-1-1-1']);
    const complete = (key: string, runId: string) => report(key, { runId, status: 'complete' });
    const silentPartials = (calls: Parameters<typeof subagentCoverageReport>[1], runId = 'sub-1') =>
      subagentCoverageReport([complete('claim', runId)], calls, nestedRuns, { parentRuns }).silentPartials;

    it('given a complete report over an unrecovered failure in a sub-subagent run, counts a silent partial', () => {
      const nested = [fact('n1', 0, 100, 'timeout', 'transient', { runId: 'sub-1-1' })];
      expect(silentPartials(nested)).toBe(1);
    });

    it('given the unrecovered failure two levels down, still counts it inside the reporting run', () => {
      const deep = [fact('n1', 0, 100, 'tool_error', 'business', { runId: 'sub-1-1-1' })];
      expect(silentPartials(deep)).toBe(1);
    });

    it('given the nested failure recovered by a later call of its chain, in its run or the parent run, counts none', () => {
      const retriedInPlace = [
        fact('n1', 0, 100, 'timeout', 'transient', { runId: 'sub-1-1' }),
        fact('n2', 200, 100, 'ok', null, { runId: 'sub-1-1' }),
      ];
      const retriedByParent = [
        fact('n1', 0, 100, 'timeout', 'transient', { runId: 'sub-1-1' }),
        fact('p1', 200, 100, 'ok_empty', 'empty', { runId: 'sub-1', retryOf: 'n1' }),
      ];
      expect(silentPartials(retriedInPlace)).toBe(0);
      expect(silentPartials(retriedByParent)).toBe(0);
    });

    it('given an unrecovered failure in the enclosing or a sibling run, does not count it inside the reporting run', () => {
      const outside = [
        fact('c1', 0, 100, 'timeout', 'transient', { runId: 'coordinator' }),
        fact('s2', 0, 100, 'timeout', 'transient', { runId: 'sub-2' }),
      ];
      expect(silentPartials(outside)).toBe(0);
      expect(silentPartials(outside, 'sub-1-1')).toBe(0);
    });

    it('given runs whose parent chain loops, ends the walk and still decides', () => {
      const looping = new Map([
        ['sub-1', 'sub-1-1'],
        ['sub-1-1', 'sub-1'],
      ]);
      const nested = [fact('n1', 0, 100, 'timeout', 'transient', { runId: 'sub-1-1' })];
      const result = subagentCoverageReport(
        [complete('claim', 'sub-1'), complete('other', 'sub-2')],
        nested,
        nestedRuns,
        {
          parentRuns: looping,
        },
      );
      expect(result.silentPartials).toBe(1);
    });
  });

  it('is the same report for any order of reports and calls', () => {
    const reports = [
      SEED_003_PARTIAL,
      report('b', { runId: 'sub-2', status: 'complete', completed: 1, total: 3 }),
    ];
    const expected = JSON.stringify(subagentCoverageReport(reports, calls, SUBAGENT_RUNS));
    expect(
      JSON.stringify(subagentCoverageReport([...reports].reverse(), [...calls].reverse(), SUBAGENT_RUNS)),
    ).toBe(expected);
  });
});

describe('silent partials: results that claim success', () => {
  // The coordinator's delegate call came back "No results found." (ok_empty) from the subagent run it started,
  // whose two web-search timeouts were never recovered (seed 000's bad pattern).
  const delegated = [
    fact('d1', 0, 5000, 'ok_empty', null, { runId: 'coordinator', tool: 'delegate_research' }),
    fact('w1', 100, 100, 'tool_error', 'transient', { runId: 'sub-1', tool: 'web_search' }),
    fact('w2', 300, 100, 'tool_error', 'transient', { runId: 'sub-1', tool: 'web_search' }),
  ];
  const delegatedRuns = new Map([['d1', ['sub-1']]]);

  it('given a result that claims success over an unrecovered failure in the subagent run, counts a silent partial', () => {
    // When: the report is computed without any subagent report span.
    const result = subagentCoverageReport([], delegated, SUBAGENT_RUNS, { delegatedRuns });
    // Then: the result counts (DOMAIN.md §4: "subagent reports or results"); it is no report.
    expect(result).toMatchObject({ reports: 0, complete: 0, silentPartials: 1 });
  });

  it('given the same run also handed back a complete report, counts that hand-back once', () => {
    const claim = report('claim', { runId: 'sub-1', status: 'complete' });
    expect(subagentCoverageReport([claim], delegated, SUBAGENT_RUNS, { delegatedRuns }).silentPartials).toBe(
      1,
    );
  });

  it('given the subagent recovered its failure, counts none', () => {
    const recovered = [
      ...delegated,
      fact('w3', 500, 100, 'ok', null, { runId: 'sub-1', tool: 'web_search' }),
    ];
    expect(subagentCoverageReport([], recovered, SUBAGENT_RUNS, { delegatedRuns }).silentPartials).toBe(0);
  });
});
