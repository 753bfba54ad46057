import { describe, expect, it } from 'vitest';
import type { EscalationFact } from './escalation-report';
import type { Outcome } from './events';
import { MS, reportCall, T0, TRACE } from './fixtures.spec-helper';
import { misclassifiedReport, type MisclassificationCall } from './misclassified-report';
import type { RetryCategory } from './retries';

const call = (
  key: string,
  startMs: number,
  outcome: Outcome,
  category: RetryCategory | null,
  extra: Partial<MisclassificationCall> = {},
): MisclassificationCall => reportCall(key, startMs, outcome, category, extra);

const searchTickets = { tool: 'search_tickets' };
const emptyAsError = (key: string, startMs: number, extra: Partial<MisclassificationCall> = {}) =>
  call(key, startMs, 'tool_error', 'empty', {
    ...searchTickets,
    emptyAsError: true,
    evidence: 'empty:code:NO_TICKETS_FOUND',
    sampleText: '{"ok":false,"error":{"code":"NO_TICKETS_FOUND"}}',
    ...extra,
  });

describe('misclassified results per server and tool', () => {
  it('given a search that reports no matches as an error, retried until it succeeds and escalated, then one group with both', () => {
    const calls = [
      emptyAsError('a', 0),
      emptyAsError('b', 200),
      emptyAsError('c', 400),
      call('ok', 2_000, 'ok', null, searchTickets),
      call('other-tool', 0, 'ok', null, { tool: 'lookup_order', runId: 'run-2' }),
    ];
    const escalation: EscalationFact = {
      key: 'e',
      traceId: TRACE,
      runId: 'run-1',
      target: 'human',
      startNs: T0 + 600n * MS,
    };
    const report = misclassifiedReport(calls, [escalation], { samplesPerDirection: 2 });
    expect(report.totals).toEqual({ calls: 5, emptyAsError: 3, failureAsEmpty: 0 });
    expect(report.groups).toHaveLength(1);
    const [group] = report.groups;
    expect(group).toMatchObject({
      server: 'support-server',
      tool: 'search_tickets',
      calls: 4,
      emptyAsError: 3,
      failureAsEmpty: 0,
      emptyAsErrorRate: 0.75,
      failureAsEmptyRate: 0,
      retriesTriggered: 3, // a → b → c → the ok call
      escalationsTriggered: 1,
    });
    expect(group!.samples.map((s) => [s.direction, s.spanId, s.evidence])).toEqual([
      ['emptyAsError', 'a', 'empty:code:NO_TICKETS_FOUND'],
      ['emptyAsError', 'b', 'empty:code:NO_TICKETS_FOUND'],
    ]);
    expect(group!.samples[0]).toMatchObject({ startTime: '2026-01-01T00:00:00.000Z', runId: 'run-1' });
  });

  it('failure-as-empty: a hidden failure, and a delegate call whose subagent run failed without recovering', () => {
    // Given a coordinator's delegate call that came back empty over a subagent failure nobody recovered, one that came
    // back with data over another (a partial answer, DOMAIN.md §3: not hidden), and an escalation right after the first
    const calls = [
      call('hidden', 0, 'ok', null, {
        tool: 'read_file',
        failureAsEmpty: true,
        evidence: 'failure:text:denied',
      }),
      call('delegate', 0, 'ok_empty', 'empty', { tool: 'research', runId: 'coordinator' }),
      call('sub-fail', 10, 'timeout', 'transient', { tool: 'search_web', runId: 'sub-run' }),
      call('delegate-ok', 5_000, 'ok', null, { tool: 'research', runId: 'coordinator' }),
      call('sub2-fail', 5_010, 'tool_error', 'transient', { tool: 'search_web', runId: 'sub-run-2' }),
      call('sub2-ok', 5_200, 'ok', null, { tool: 'search_web', runId: 'sub-run-2' }),
      call('delegate-data', 9_000, 'ok', null, { tool: 'research', runId: 'coordinator' }),
      call('sub3-fail', 9_010, 'tool_error', 'permission', { tool: 'search_web', runId: 'sub-run-3' }),
    ];
    const escalation: EscalationFact = {
      key: 'e',
      traceId: TRACE,
      runId: 'coordinator',
      target: 'human',
      startNs: T0 + 1_000n * MS,
    };
    // When the misclassified report is built
    const report = misclassifiedReport(calls, [escalation], {
      delegatedRuns: new Map([
        ['delegate', ['sub-run']],
        ['delegate-ok', ['sub-run-2']],
        ['delegate-data', ['sub-run-3']],
      ]),
    });
    // Then the empty delegate call is a hidden failure, and the escalation it triggered counts; the data one is not
    expect(report.totals).toMatchObject({ calls: 8, failureAsEmpty: 2, emptyAsError: 0 });
    expect(
      report.groups.map((g) => [
        g.tool,
        g.failureAsEmpty,
        g.calls,
        g.escalationsTriggered,
        g.samples.map((sample) => [sample.spanId, sample.evidence]),
      ]),
    ).toEqual([
      ['read_file', 1, 1, 0, [['hidden', 'failure:text:denied']]],
      ['research', 1, 3, 1, [['delegate', 'failure:subagent_unrecovered']]],
    ]);
  });

  it('failure-as-empty: a subagent whose search found nothing, misreported as an error by its server, hides no failure', () => {
    // Given a delegate call that came back empty over a subagent run whose only failure is an empty-as-error (the
    // server said "no results" with isError): the subagent's "nothing found" is the honest answer
    const calls = [
      call('delegate', 0, 'ok_empty', 'empty', { tool: 'research', runId: 'coordinator' }),
      emptyAsError('sub-empty', 10, { runId: 'sub-run' }),
    ];
    // When the misclassified report is built
    const report = misclassifiedReport(calls, [], { delegatedRuns: new Map([['delegate', ['sub-run']]]) });
    // Then the server's empty-as-error is reported, and the delegate call is no failure-as-empty
    expect(report.totals).toMatchObject({ calls: 2, emptyAsError: 1, failureAsEmpty: 0 });
  });

  it('is the same report for any order of calls', () => {
    const calls = [
      emptyAsError('a', 0),
      emptyAsError('b', 200),
      call('x', 0, 'ok', null, { failureAsEmpty: true, tool: 'z' }),
    ];
    const expected = JSON.stringify(misclassifiedReport(calls, []));
    expect(JSON.stringify(misclassifiedReport([...calls].reverse(), []))).toBe(expected);
  });
});
