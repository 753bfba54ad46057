import { describe, expect, it } from 'vitest';
import type { CallFinding } from './call-findings';
import type { Outcome } from './events';
import { MS, reportCall, T0, TRACE } from './fixtures.spec-helper';
import { findingId, findingsReport, type FindingCall, type FindingReportFact } from './findings-report';
import type { RetryCategory } from './retries';

const call = (
  key: string,
  startMs: number,
  outcome: Outcome,
  category: RetryCategory | null,
  findings: CallFinding[],
  extra: Partial<FindingCall> = {},
): FindingCall =>
  reportCall(key, startMs, outcome, category, { sampleText: `text of ${key}`, findings, ...extra });

const untyped: CallFinding[] = [{ rule: 'untyped-error', evidence: 'source:none' }];

describe('findingsReport', () => {
  it('given an untyped error retried twice without recovering, and escalated, then one finding with its evidence and cost', () => {
    const calls = [
      call('a', 0, 'tool_error', 'unknown', untyped),
      call('b', 200, 'tool_error', 'unknown', untyped, { serverVersion: '1.1.0' }),
      call('c', 400, 'tool_error', 'unknown', untyped, { serverVersion: '1.1.0' }),
      call('other-tool', 5_000, 'ok', null, [], { tool: 'get_order_status' }),
    ];
    const report = findingsReport(
      calls,
      [],
      [{ key: 'e', traceId: TRACE, runId: 'run-1', target: 'human', startNs: T0 + 600n * MS }],
    );
    expect(report.findings).toEqual([
      {
        id: findingId('support-server', 'lookup_order', 'untyped-error'),
        server: 'support-server',
        tool: 'lookup_order',
        rule: 'untyped-error',
        count: 3,
        rate: 1,
        firstSeen: '2026-01-01T00:00:00.000Z',
        lastSeen: '2026-01-01T00:00:00.400Z',
        serverVersions: ['1.0.0', '1.1.0'],
        evidence: { 'source:none': 3 },
        retriesCaused: 2,
        wastedRetries: 2, // guesses in a chain that never recovered
        wastedMs: 200,
        escalationsCaused: 1,
        samples: [
          expect.objectContaining({ spanId: 'a', evidence: 'source:none', text: 'text of a' }),
          expect.objectContaining({ spanId: 'b' }),
          expect.objectContaining({ spanId: 'c' }),
        ],
      },
    ]);
  });

  it('lists the server versions seen offending oldest first, as semantic versioning orders them (as fixes do)', () => {
    const versions = ['1.10.0', '1.9.0', '2.0.0', '2.0.0-rc.10', '2.0.0-rc.9'];
    const calls = versions.map((serverVersion, i) =>
      call(`v${i}`, i * 100, 'tool_error', 'unknown', untyped, { serverVersion }),
    );
    expect(findingsReport(calls, [], []).findings[0]!.serverVersions).toEqual([
      '1.9.0',
      '1.10.0',
      '2.0.0-rc.9',
      '2.0.0-rc.10',
      '2.0.0',
    ]);
  });

  it('adds the subagent case of failure-as-empty and reports missing propagation context per subagent', () => {
    const calls = [
      call('delegate', 0, 'ok_empty', 'empty', [], { tool: 'research', runId: 'coordinator' }),
      call('sub-fail', 10, 'timeout', 'transient', [], { tool: 'search_web', runId: 'sub-run' }),
    ];
    const report = (key: string, init: Partial<FindingReportFact>): FindingReportFact => ({
      key,
      runId: 'sub-run',
      status: 'partial',
      completed: 1,
      total: 2,
      category: 'transient',
      attempted: ['x'],
      alternatives: ['y'],
      partialResults: '1',
      agentName: 'web-research',
      traceId: 't',
      startNs: T0,
      ...init,
    });
    const result = findingsReport(
      calls,
      [
        report('r1', { alternatives: null }),
        report('r2', {}),
        report('r3', { status: 'complete', attempted: null }),
      ],
      [],
      { delegatedRuns: new Map([['delegate', ['sub-run']]]) },
    );
    expect(result.findings.map((f) => [f.rule, f.server, f.tool, f.count, f.rate, f.evidence])).toEqual([
      ['failure-as-empty', 'support-server', 'research', 1, 1, { 'failure:subagent_unrecovered': 1 }],
      ['missing-propagation-context', null, 'web-research', 1, 0.5, { 'missing:alternatives': 1 }],
    ]);
  });

  it('is the same for any input order, and ids do not depend on the data', () => {
    const calls = [
      call('a', 0, 'tool_error', 'unknown', untyped),
      call('x', 0, 'tool_error', 'validation', [{ rule: 'wrong-channel', evidence: 'jsonrpc:-32602' }], {
        tool: 'search',
      }),
    ];
    const expected = JSON.stringify(findingsReport(calls, [], []));
    expect(JSON.stringify(findingsReport([...calls].reverse(), [], []))).toBe(expected);
    expect(findingId('s', 't', 'leaky-error')).toMatch(/^[0-9a-f]{20}$/);
    expect(findingId('s', 't', 'leaky-error')).not.toBe(findingId('s', 't', 'raw-exception'));
  });
});

describe('findingsReport: retryable-mismatch on the evidence of the trace', () => {
  const EVIDENCE = 'declared_not_retryable:retry_succeeded';
  /** A transient failure its server declared not retryable, then a retry of it 200 ms later. */
  const declaredNotRetryable = (retry: Partial<FindingCall> & { outcome?: Outcome } = {}) => [
    call('a', 0, 'tool_error', 'transient', [], { declaredRetryable: false }),
    call('b', 200, retry.outcome ?? 'ok', retry.outcome === 'tool_error' ? 'transient' : null, [], retry),
  ];
  const mismatches = (calls: FindingCall[]) =>
    findingsReport(calls, [], []).findings.filter((finding) => finding.rule === 'retryable-mismatch');

  it('given a failure declared not retryable whose retry with the same arguments came back ok, then the failure violates retryable-mismatch', () => {
    const [finding, ...others] = mismatches(declaredNotRetryable());
    expect(others).toEqual([]);
    expect(finding).toMatchObject({
      id: findingId('support-server', 'lookup_order', 'retryable-mismatch'),
      count: 1,
      rate: 0.5,
      evidence: { [EVIDENCE]: 1 },
      retriesCaused: 1,
      wastedRetries: 0,
      serverVersions: ['1.0.0'],
      samples: [expect.objectContaining({ spanId: 'a', evidence: EVIDENCE, text: 'text of a' })],
    });
  });

  it('given the same-arguments retry came back ok_empty, then the failure violates it too', () => {
    expect(mismatches(declaredNotRetryable({ outcome: 'ok_empty' })).map((f) => f.evidence)).toEqual([
      { [EVIDENCE]: 1 },
    ]);
  });

  it('given the retry changed the arguments, or either arguments are unknown, then no finding: the change may be what worked', () => {
    expect(mismatches(declaredNotRetryable({ argsHash: 'h2' }))).toEqual([]);
    expect(mismatches(declaredNotRetryable({ argsHash: null }))).toEqual([]);
  });

  it("given the same-arguments retry failed and a later one recovered the chain, then no finding: the failure's own retry did not succeed", () => {
    const calls = [...declaredNotRetryable({ outcome: 'tool_error' }), call('c', 400, 'ok', null, [])];
    expect(mismatches(calls)).toEqual([]);
  });

  it('given the failure was declared retryable, or its retryability only implied, then a successful retry proves nothing wrong', () => {
    const [a, b] = declaredNotRetryable();
    expect(mismatches([{ ...a!, declaredRetryable: true }, b!])).toEqual([]);
    expect(mismatches([{ ...a!, declaredRetryable: null }, b!])).toEqual([]);
  });

  it('given a retry in another trace that names the failure by an errata.retry.of hint, then the failure violates it', () => {
    const calls = [
      call('a', 0, 'tool_error', 'transient', [], {
        declaredRetryable: false,
        traceId: 'job-1',
        runId: 'r1',
      }),
      call('b', 60_000, 'ok', null, [], { traceId: 'job-2', runId: 'r2', retryOf: 'a' }),
    ];
    expect(mismatches(calls).map((f) => [f.count, f.evidence, f.samples.map((s) => s.spanId)])).toEqual([
      [1, { [EVIDENCE]: 1 }, ['a']],
    ]);
    // Without the hint, calls of two runs are no retry of each other.
    expect(mismatches(calls.map((c) => ({ ...c, retryOf: null })))).toEqual([]);
  });

  it('given a business failure of the tool declared retryable too, then one finding counts both kinds of evidence', () => {
    const declaredRetryable = [
      { rule: 'retryable-mismatch' as const, evidence: 'declared_retryable:business' },
    ];
    const calls = [
      call('x', 0, 'tool_error', 'business', declaredRetryable, { runId: 'run-0', declaredRetryable: true }),
      ...declaredNotRetryable(),
    ];
    expect(mismatches(calls).map((f) => [f.count, f.evidence])).toEqual([
      [2, { 'declared_retryable:business': 1, [EVIDENCE]: 1 }],
    ]);
  });
});
