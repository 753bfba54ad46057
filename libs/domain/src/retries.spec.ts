import { describe, expect, it } from 'vitest';

import { classifyToolCall } from './classify';
import { errataToolSpan, fact, MS, sid, T0, toolCallOf, TRACE } from './fixtures.spec-helper';
import { analyzeRetries, toCallFact, type CallFact } from './retries';

const labelsOf = (calls: CallFact[], windowMs?: number) =>
  analyzeRetries(calls, { windowMs }).retries.map((r) => [r.key, r.retryOf, r.label, r.wasted, r.via]);

describe('analyzeRetries: labels (DOMAIN.md §2 table)', () => {
  it.each(['business', 'permission'] as const)(
    'given a %s failure, then any retry is wasted non_retryable',
    (category) => {
      const calls = [
        fact('a', 0, 100, 'tool_error', category),
        fact('b', 200, 100, 'tool_error', category),
        fact('c', 400, 100, 'tool_error', category, { argsHash: 'h2' }),
      ];
      expect(labelsOf(calls)).toEqual([
        ['b', 'a', 'non_retryable', true, 'inferred'],
        ['c', 'b', 'non_retryable', true, 'inferred'],
      ]);
    },
  );

  it('given a validation failure, then same args is a wasted blind_retry and changed args a useful correction', () => {
    const calls = [
      fact('a', 0, 100, 'tool_error', 'validation'),
      fact('b', 200, 100, 'tool_error', 'validation'),
      fact('c', 400, 100, 'ok', null, { argsHash: 'h2' }),
    ];
    expect(labelsOf(calls)).toEqual([
      ['b', 'a', 'blind_retry', true, 'inferred'],
      ['c', 'b', 'corrected', false, 'inferred'],
    ]);
  });

  it('given unknown args hashes, then the retry counts as changed (waste only on evidence)', () => {
    const calls = [
      fact('a', 0, 100, 'tool_error', 'validation', { argsHash: null }),
      fact('b', 200, 100, 'ok', null),
    ];
    const [retry] = analyzeRetries(calls).retries;
    expect(retry).toMatchObject({ label: 'corrected', wasted: false, sameArgs: null });
  });

  it('given a transient failure, then a retry is a useful recovery, same or changed args', () => {
    const calls = [
      fact('a', 0, 100, 'timeout', 'transient'),
      fact('b', 200, 100, 'transport_error', 'transient'),
      fact('c', 400, 100, 'ok', null, { argsHash: 'h9' }),
    ];
    expect(labelsOf(calls).map((r) => r[2])).toEqual(['recovery', 'recovery']);
  });

  it('given a declared retry-after, then a retry that starts before it elapsed is wasted ignored_retry_after', () => {
    const early = [
      fact('a', 0, 100, 'tool_error', 'transient', { retryAfterMs: 1000 }),
      fact('b', 1099, 50, 'ok', null),
    ];
    const onTime = [
      fact('a', 0, 100, 'tool_error', 'transient', { retryAfterMs: 1000 }),
      fact('b', 1100, 50, 'ok', null),
    ];
    expect(labelsOf(early)).toEqual([['b', 'a', 'ignored_retry_after', true, 'inferred']]);
    expect(labelsOf(onTime)).toEqual([['b', 'a', 'recovery', false, 'inferred']]);
  });

  it('given an unknown category, then guess — wasted only when the chain never reaches ok/ok_empty', () => {
    const recovered = [
      fact('a', 0, 100, 'tool_error', 'unknown'),
      fact('b', 200, 100, 'tool_error', 'unknown'),
      fact('c', 400, 100, 'ok_empty', 'empty'),
    ];
    const unrecovered = [
      fact('a', 0, 100, 'tool_error', 'unknown'),
      fact('b', 200, 100, 'protocol_error', 'unknown'),
    ];
    expect(labelsOf(recovered)).toEqual([
      ['b', 'a', 'guess', false, 'inferred'],
      ['c', 'b', 'guess', false, 'inferred'],
    ]);
    expect(labelsOf(unrecovered)).toEqual([['b', 'a', 'guess', true, 'inferred']]);
  });

  it('given a guess whose chain reaches ok_empty and then fails again, then the guess is useful, and the chain unrecovered', () => {
    const calls = [
      fact('a', 0, 100, 'tool_error', 'unknown'),
      fact('b', 200, 100, 'ok_empty', 'empty'),
      fact('c', 400, 100, 'tool_error', 'unknown'),
    ];
    expect(labelsOf(calls)).toEqual([
      ['b', 'a', 'guess', false, 'inferred'],
      ['c', 'b', 'repeated_empty', true, 'inferred'],
    ]);
    expect(analyzeRetries(calls).chains).toMatchObject([{ recovered: false, lastOutcome: 'tool_error' }]);
  });

  it('given a chain that starts with ok_empty, then a guess after it is wasted unless a later call reaches ok', () => {
    const calls = [
      fact('a', 0, 100, 'ok_empty', 'empty'),
      fact('b', 200, 100, 'tool_error', 'unknown', { argsHash: 'h2' }),
      fact('c', 400, 100, 'tool_error', 'unknown', { argsHash: 'h2' }),
    ];
    expect(labelsOf(calls)).toEqual([
      ['b', 'a', 'refined', false, 'inferred'],
      ['c', 'b', 'guess', true, 'inferred'],
    ]);
  });

  it('given a failed call without a category, then it is treated as unknown', () => {
    const calls = [fact('a', 0, 100, 'protocol_error', null), fact('b', 200, 100, 'ok', null)];
    expect(analyzeRetries(calls).retries[0]).toMatchObject({
      label: 'guess',
      retriedCategory: 'unknown',
      wasted: false,
    });
  });

  it('given an empty-as-error failure, then any retry is wasted misclassified_empty', () => {
    const calls = [
      fact('a', 0, 100, 'tool_error', 'empty'),
      fact('b', 200, 100, 'tool_error', 'empty', { argsHash: 'h2' }),
    ];
    expect(labelsOf(calls)).toEqual([['b', 'a', 'misclassified_empty', true, 'inferred']]);
  });

  it('given a valid empty result, then the same query again is wasted repeated_empty and a new one refined', () => {
    const calls = [
      fact('a', 0, 100, 'ok_empty', 'empty'),
      fact('b', 200, 100, 'ok_empty', 'empty'),
      fact('c', 400, 100, 'ok', null, { argsHash: 'h2' }),
    ];
    expect(labelsOf(calls)).toEqual([
      ['b', 'a', 'repeated_empty', true, 'inferred'],
      ['c', 'b', 'refined', false, 'inferred'],
    ]);
  });
});

describe('analyzeRetries: linking', () => {
  it('given an explicit hint, then it wins over inference (other tool, outside the window)', () => {
    const calls = [
      fact('a', 0, 100, 'tool_error', 'business', { tool: 'process_refund' }),
      fact('x', 1_000_000, 100, 'tool_error', 'validation'),
      fact('b', 1_000_200, 100, 'ok', null, { retryOf: 'a' }),
    ];
    expect(labelsOf(calls)).toEqual([['b', 'a', 'non_retryable', true, 'hint']]);
  });

  it('given a hint naming an unknown span, an ok call, or a later call, then the call is no retry at all', () => {
    const calls = [
      fact('ok', 0, 100, 'ok', null),
      fact('a', 200, 100, 'tool_error', 'validation'),
      fact('b', 400, 100, 'tool_error', 'validation', { retryOf: 'missing' }),
      fact('c', 600, 100, 'tool_error', 'validation', { retryOf: 'ok' }),
      fact('d', 800, 100, 'tool_error', 'validation', { retryOf: 'e' }),
      fact('e', 1000, 100, 'tool_error', 'validation'),
    ];
    expect(labelsOf(calls)).toEqual([['e', 'd', 'blind_retry', true, 'inferred']]);
  });

  it('given the retry window, then a retry must start within it after the previous call ended', () => {
    const at = (gapMs: number, windowMs?: number) =>
      labelsOf(
        [fact('a', 0, 100, 'tool_error', 'transient'), fact('b', 100 + gapMs, 100, 'ok', null)],
        windowMs,
      ).length;
    expect(at(600_000)).toBe(1);
    expect(at(600_001)).toBe(0);
    expect(at(5_000, 4_999)).toBe(0);
    expect(at(5_000, 5_000)).toBe(1);
  });

  it('given an ok call to the tool in between, then the chain is broken', () => {
    const calls = [
      fact('a', 0, 100, 'tool_error', 'transient'),
      fact('ok', 200, 100, 'ok', null),
      fact('b', 400, 100, 'tool_error', 'transient'),
    ];
    // The ok call recovered a; b, after it, starts something new.
    expect(labelsOf(calls)).toEqual([['ok', 'a', 'recovery', false, 'inferred']]);
  });

  it('given an ok_empty call in between, then it does not break the chain: it is the call retried', () => {
    const calls = [
      fact('a', 0, 100, 'tool_error', 'transient'),
      fact('e', 200, 100, 'ok_empty', 'empty'),
      fact('b', 400, 100, 'ok', null, { argsHash: 'h2' }),
    ];
    expect(labelsOf(calls)).toEqual([
      ['e', 'a', 'recovery', false, 'inferred'],
      ['b', 'e', 'refined', false, 'inferred'],
    ]);
  });

  it('given an ok call to another tool, server or run in between, then the chain holds', () => {
    const calls = [
      fact('a', 0, 100, 'tool_error', 'validation'),
      fact('o1', 150, 10, 'ok', null, { tool: 'other' }),
      fact('o2', 160, 10, 'ok', null, { server: 'other' }),
      fact('o3', 170, 10, 'ok', null, { runId: 'run-2' }),
      fact('b', 200, 100, 'ok', null, { argsHash: 'h2' }),
    ];
    expect(labelsOf(calls)).toEqual([['b', 'a', 'corrected', false, 'inferred']]);
  });

  it('never links across runs, servers or tools, nor to a call still running', () => {
    expect(
      labelsOf([
        fact('a', 0, 100, 'tool_error', 'transient'),
        fact('b', 200, 100, 'ok', null, { runId: 'r2' }),
      ]),
    ).toEqual([]);
    expect(
      labelsOf([
        fact('a', 0, 100, 'tool_error', 'transient'),
        fact('b', 200, 100, 'ok', null, { server: null }),
      ]),
    ).toEqual([]);
    expect(
      labelsOf([
        fact('a', 0, 100, 'tool_error', 'transient'),
        fact('b', 200, 100, 'ok', null, { tool: 't2' }),
      ]),
    ).toEqual([]);
    expect(labelsOf([fact('a', 0, 500, 'tool_error', 'transient'), fact('b', 200, 100, 'ok', null)])).toEqual(
      [],
    );
  });

  it('given a start cut to the millisecond (OpenTelemetry JS), then it may precede the failure it retries by under 1 ms', () => {
    // A from T0 + 10 ms lasting 2.4 ms; B stamped at T0 + 12 ms, its start cut from some time after A ended.
    const a = fact('a', 10, 0, 'tool_error', 'validation', { endNs: T0 + 12n * MS + 400_000n });
    const b = fact('b', 12, 3, 'tool_error', 'validation');
    expect(labelsOf([a, b])).toEqual([['b', 'a', 'blind_retry', true, 'inferred']]);
    // A start with sub-millisecond digits was not cut: it started before A ended.
    expect(labelsOf([a, { ...b, startNs: b.startNs + 1n }])).toEqual([]);
    // A full millisecond before A's end is no cut start: A was still running.
    expect(labelsOf([{ ...a, endNs: T0 + 13n * MS }, b])).toEqual([]);
    // Two starts cut to the same millisecond say nothing of which call came first.
    expect(labelsOf([{ ...a, startNs: T0 + 12n * MS }, b])).toEqual([]);
  });

  it('links to the most recent qualifying call, past a longer call that is still running', () => {
    const calls = [
      fact('a1', 0, 100, 'tool_error', 'transient'),
      fact('slow', 50, 10_000, 'tool_error', 'transient'),
      fact('b', 200, 100, 'ok', null),
    ];
    expect(labelsOf(calls)).toEqual([['b', 'a1', 'recovery', false, 'inferred']]);
  });

  it('treats null servers as the same server', () => {
    const calls = [
      fact('a', 0, 100, 'tool_error', 'transient', { server: null }),
      fact('b', 200, 100, 'ok', null, { server: null }),
    ];
    expect(labelsOf(calls)).toHaveLength(1);
  });
});

describe('analyzeRetries: chains', () => {
  it('builds chains of a non-ok call and its retries; unrecovered when the last call is not ok/ok_empty', () => {
    const { chains, retries } = analyzeRetries([
      fact('a', 0, 100, 'tool_error', 'transient'),
      fact('b', 200, 100, 'timeout', 'transient'),
      fact('c', 400, 100, 'ok', null),
      fact('x', 10_000, 100, 'tool_error', 'permission', { tool: 'refund' }),
      fact('y', 10_200, 100, 'tool_error', 'permission', { tool: 'refund' }),
      fact('lonely', 20_000, 100, 'tool_error', 'business', { tool: 'cancel' }),
    ]);
    expect(chains).toEqual([
      {
        key: 'a',
        calls: ['a', 'b', 'c'],
        category: 'transient',
        server: 'support-server',
        tool: 'lookup_order',
        lastOutcome: 'ok',
        recovered: true,
      },
      {
        key: 'x',
        calls: ['x', 'y'],
        category: 'permission',
        server: 'support-server',
        tool: 'refund',
        lastOutcome: 'tool_error',
        recovered: false,
      },
    ]);
    expect(retries.map((r) => r.chainKey)).toEqual(['a', 'a', 'x']);
  });

  it('reports each retry with its own duration and tokens', () => {
    const [retry] = analyzeRetries([
      fact('a', 0, 100, 'tool_error', 'business'),
      fact('b', 200, 345, 'tool_error', 'business', { tokens: 77 }),
    ]).retries;
    expect(retry).toMatchObject({
      durationNs: 345n * MS,
      tokens: 77,
      retriedCategory: 'business',
      server: 'support-server',
    });
  });

  it('is deterministic whatever the input order (start time, then span id)', () => {
    const calls = [
      fact('b', 0, 100, 'tool_error', 'validation'),
      fact('a', 0, 100, 'tool_error', 'validation', { argsHash: 'h2' }),
      fact('c', 200, 100, 'tool_error', 'unknown'),
      fact('d', 400, 100, 'ok', null),
    ];
    const expected = analyzeRetries(calls);
    for (const permutation of [
      [3, 2, 1, 0],
      [1, 0, 3, 2],
      [2, 0, 3, 1],
    ]) {
      expect(analyzeRetries(permutation.map((i) => calls[i]!))).toEqual(expected);
    }
  });
});

describe('toCallFact', () => {
  it('turns a normalized, classified call into retry facts', () => {
    const call = toolCallOf(
      errataToolSpan(
        'search_docs',
        { isError: false },
        {
          spanId: sid(9),
          startMs: 1000,
          durationMs: 250,
          empty: true,
          attributes: {
            'errata.args.hash': 'abc',
            'errata.retry.of': sid(8),
            'gen_ai.usage.output_tokens': 12,
          },
        },
      ),
    );
    expect(toCallFact(call, classifyToolCall(call), 'run-7')).toEqual({
      key: sid(9),
      traceId: TRACE,
      runId: 'run-7',
      server: 'support-server',
      tool: 'search_docs',
      outcome: 'ok_empty',
      category: 'empty',
      startNs: T0 + 1000n * MS,
      endNs: T0 + 1250n * MS,
      argsHash: 'abc',
      retryOf: sid(8),
      retryAfterMs: null,
      tokens: 12,
    });
  });
});
