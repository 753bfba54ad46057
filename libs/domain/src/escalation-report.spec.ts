import { describe, expect, it } from 'vitest';
import { classifyToolCall } from './classify';
import { escalationReport, type EscalationCall, type EscalationFact } from './escalation-report';
import type { Outcome } from './events';
import { errataToolSpan, MS, reportCall, T0, toolCallOf, TRACE } from './fixtures.spec-helper';
import type { RetryCategory } from './retries';

/** A call in run-1 (unless `runId` says otherwise). */
const call = (
  key: string,
  startMs: number,
  outcome: Outcome,
  category: RetryCategory | null,
  extra: Partial<EscalationCall> = {},
): EscalationCall => reportCall(key, startMs, outcome, category, extra);

const escalate = (
  key: string,
  atMs: number,
  target: EscalationFact['target'] = 'human',
  runId = 'run-1',
): EscalationFact => ({
  key,
  traceId: TRACE,
  runId,
  target,
  startNs: T0 + BigInt(atMs) * MS,
});

describe('attribution', () => {
  it('given two failures in a run, an escalation goes to the one that ended last before it', () => {
    const report = escalationReport(
      [
        call('a', 0, 'tool_error', 'transient'),
        call('b', 1_000, 'tool_error', 'permission'),
        call('c', 5_000, 'tool_error', 'business'),
      ],
      [escalate('e', 2_000)],
    );
    expect(report.attributions).toEqual([
      { escalation: 'e', call: 'b', category: 'permission', avoidable: null },
    ]);
  });

  it('ignores calls of other runs, calls still running and ok calls', () => {
    const report = escalationReport(
      [
        call('other-run', 0, 'tool_error', 'transient', { runId: 'run-2' }),
        call('running', 950, 'tool_error', 'transient'), // ends at 1,050
        call('ok', 800, 'ok', null),
      ],
      [escalate('e', 1_000)],
    );
    expect(report.attributions[0]).toMatchObject({ call: null, category: null });
    expect(report.totals).toMatchObject({ escalations: 1, attributed: 0, unattributed: 1 });
  });

  it('given a start cut to the millisecond (OpenTelemetry JS), then it may precede the failure it follows by under 1 ms', () => {
    // A fast failure from T0 + 10 ms lasting 2.4 ms; the escalation stamped at T0 + 12 ms, cut from after it ended.
    const fast = call('fast', 10, 'tool_error', 'business', { endNs: T0 + 12n * MS + 400_000n });
    const attributed = (escalation: EscalationFact) =>
      escalationReport([call('earlier', -200, 'tool_error', 'permission'), fast], [escalation])
        .attributions[0]?.call;
    expect(attributed(escalate('e', 12))).toBe('fast');
    // A start with sub-millisecond digits was not cut: the failure was still running (the earlier one had ended).
    expect(attributed({ ...escalate('e', 12), startNs: T0 + 12n * MS + 1n })).toBe('earlier');
    // Stamped in the failure's own millisecond, it says nothing of which came first.
    expect(attributed(escalate('e', 10))).toBe('earlier');
  });

  it('ignores failures that ended longer than the retry window before the escalation', () => {
    const old = [call('old', 0, 'tool_error', 'permission')]; // ends at 100 ms
    expect(escalationReport(old, [escalate('e', 100 + 600_000)]).attributions[0]?.call).toBe('old');
    expect(escalationReport(old, [escalate('e', 100 + 600_001)]).attributions[0]?.call).toBeNull();
    expect(escalationReport(old, [escalate('e', 200)], { windowMs: 50 }).attributions[0]?.call).toBeNull();
  });

  it('a failure-as-empty call attracts the escalation, under unknown, without counting as a failure', () => {
    const report = escalationReport(
      [call('hidden', 0, 'ok', null, { failureAsEmpty: true })],
      [escalate('e', 500, 'coordinator')],
    );
    expect(report.attributions[0]).toMatchObject({ call: 'hidden', category: 'unknown' });
    expect(report.totals).toMatchObject({ failures: 0, rate: null });
    expect(report.byTarget).toEqual({ human: 0, user: 0, coordinator: 1 });
  });

  it('empty-as-error calls are failures of category empty', () => {
    const report = escalationReport([call('nf', 0, 'tool_error', 'empty')], [escalate('e', 200)]);
    expect(report.byCategory.find((row) => row.category === 'empty')).toEqual({
      category: 'empty',
      failures: 1,
      escalations: 1,
      avoidable: 0,
      rate: 1,
    });
  });
});

describe('avoidable escalations (DOMAIN.md §4)', () => {
  it.each([
    [
      'a business failure with a customer-facing explanation',
      [call('a', 0, 'tool_error', 'business', { customerExplanation: true })],
      'explained_business',
    ],
    ['a business failure without one', [call('a', 0, 'tool_error', 'business')], null],
    ['a transient failure never retried', [call('a', 0, 'tool_error', 'transient')], 'unretried_transient'],
    [
      'a transient failure retried (and failing again)',
      [call('a', 0, 'tool_error', 'transient'), call('b', 200, 'tool_error', 'transient')],
      null,
    ],
    [
      'a validation failure never retried',
      [call('a', 0, 'tool_error', 'validation')],
      'uncorrected_validation',
    ],
    [
      'a validation failure retried with the same arguments only',
      [call('a', 0, 'tool_error', 'validation'), call('b', 200, 'tool_error', 'validation')],
      'uncorrected_validation',
    ],
    [
      'a validation failure retried with changed arguments',
      [
        call('a', 0, 'tool_error', 'validation'),
        call('b', 200, 'tool_error', 'validation', { argsHash: 'h2' }),
      ],
      null,
    ],
    ['a permission failure', [call('a', 0, 'tool_error', 'permission')], null],
    [
      'a transient failure retried once, the retry succeeding, then an escalation anyway',
      [call('a', 0, 'tool_error', 'transient'), call('b', 200, 'ok', null)],
      null,
    ],
    [
      'a validation failure corrected into a transient failure nobody retried',
      [
        call('a', 0, 'tool_error', 'validation'),
        call('b', 200, 'tool_error', 'transient', { argsHash: 'h2' }),
      ],
      'unretried_transient',
    ],
    [
      // The chain branches: the validation failure is retried again while the transient call still runs.
      'a validation failure corrected into a transient failure nobody retried, the chain going on without it',
      [
        call('a', 0, 'tool_error', 'validation'),
        call('b', 200, 'tool_error', 'transient', { argsHash: 'h2', endNs: T0 + 600n * MS }),
        call('c', 300, 'tool_error', 'validation'),
      ],
      'unretried_transient',
    ],
  ] as const)('%s → %s', (_name, calls, reason) => {
    const report = escalationReport(calls, [escalate('e', 10_000)]);
    expect(report.attributions[0]?.avoidable).toBe(reason);
    expect(report.totals.avoidable).toBe(reason === null ? 0 : 1);
  });

  // DOMAIN.md §4 says "never retried"; whether a retry after the hand-off counts is the reading libs/domain/README.md
  // records: it does (the human may have said to try again), whenever it came.
  it.each([
    ['a transient failure retried only after the escalation', 'transient', undefined],
    ['a validation failure corrected only after the escalation', 'validation', 'h2'],
  ] as const)('%s → not avoidable', (_name, category, argsHash) => {
    const report = escalationReport(
      [call('a', 0, 'tool_error', category), call('b', 20_000, 'ok', null, argsHash ? { argsHash } : {})],
      [escalate('e', 10_000)],
    );
    expect(report.attributions[0]).toMatchObject({ call: 'a', avoidable: null });
  });
});

describe('rates', () => {
  it('escalations / failed calls, overall and per category; every category listed in a fixed order', () => {
    const report = escalationReport(
      [
        call('t1', 0, 'tool_error', 'transient'),
        call('t2', 0, 'timeout', 'transient', { runId: 'run-2', key: 't2' }),
        call('b1', 0, 'tool_error', 'business', { runId: 'run-3', customerExplanation: true }),
        call('p1', 0, 'protocol_error', 'validation', { runId: 'run-4' }),
      ],
      [escalate('e1', 500), escalate('e2', 500, 'user', 'run-3'), escalate('e3', 500, 'human', 'run-9')],
    );
    expect(report.totals).toEqual({
      failures: 4,
      escalations: 3,
      attributed: 2,
      unattributed: 1,
      avoidable: 2,
      rate: 0.75,
    });
    expect(
      report.byCategory.map((row) => [row.category, row.failures, row.escalations, row.avoidable, row.rate]),
    ).toEqual([
      ['transient', 2, 1, 1, 0.5],
      ['validation', 1, 0, 0, 0],
      ['business', 1, 1, 1, 1],
      ['permission', 0, 0, 0, null],
      ['unknown', 0, 0, 0, null],
      ['empty', 0, 0, 0, null],
    ]);
  });

  it('is the same report for any order of calls and escalations', () => {
    const calls = [
      call('a', 0, 'tool_error', 'validation'),
      call('b', 200, 'tool_error', 'validation', { argsHash: 'h2' }),
      call('c', 400, 'tool_error', 'business', { customerExplanation: true }),
      call('d', 0, 'tool_error', 'transient', { runId: 'run-2' }),
    ];
    const escalations = [
      escalate('e1', 350),
      escalate('e2', 900, 'user'),
      escalate('e3', 300, 'coordinator', 'run-2'),
    ];
    const expected = JSON.stringify(escalationReport(calls, escalations));
    expect(JSON.stringify(escalationReport([...calls].reverse(), [...escalations].reverse()))).toBe(expected);
    expect(
      JSON.stringify(
        escalationReport(
          [calls[2]!, calls[0]!, calls[3]!, calls[1]!],
          [escalations[1]!, escalations[2]!, escalations[0]!],
        ),
      ),
    ).toBe(expected);
  });
});

describe('customer-facing explanations are read by the classification', () => {
  it('seed 003 REFUND_WINDOW_EXPIRED carries one; a bare "Refund failed" does not', () => {
    const payload = {
      errorCategory: 'business',
      retriable: false,
      code: 'REFUND_WINDOW_EXPIRED',
      customerExplanation: 'This order was delivered on 12 March, which is outside our 30-day refund window.',
    };
    const explained = toolCallOf(
      errataToolSpan('process_refund', {
        isError: true,
        content: [{ type: 'text', text: JSON.stringify(payload) }],
        structuredContent: payload,
      }),
    );
    expect(classifyToolCall(explained)).toMatchObject({ category: 'business', customerExplanation: true });
    const bare = toolCallOf(
      errataToolSpan('process_refund', { isError: true, content: [{ type: 'text', text: 'Refund failed' }] }),
    );
    expect(classifyToolCall(bare).customerExplanation).toBe(false);
  });
});
