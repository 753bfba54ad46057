import { describe, expect, it } from 'vitest';
import type { TraceItems } from '../repositories/trace-items.repository';
import { linkedTraceGroups } from './trace-contributions';

/** Calls as the grouping reads them: trace, span and hint (the rest of a row does not matter to it). */
function items(calls: readonly { traceId: string; spanId: string; retryOf?: string }[]): TraceItems {
  return {
    calls: calls.map((call) => ({ retryOf: null, ...call })) as unknown as TraceItems['calls'],
    escalations: [],
    reports: [],
    agents: [],
    edges: [],
  };
}

const groupsOf = (given: TraceItems): string[][] =>
  linkedTraceGroups(given)
    .map((group) => [...new Set(group.calls.map((call) => call.traceId))].sort())
    .sort();

describe('linkedTraceGroups', () => {
  it('keeps traces apart that reuse span ids, and a hint naming a call of its own trace links nothing', () => {
    const given = items([
      { traceId: 'a', spanId: 's1' },
      { traceId: 'a', spanId: 's2', retryOf: 's1' },
      { traceId: 'b', spanId: 's1' },
      { traceId: 'b', spanId: 's2' },
    ]);
    expect(groupsOf(given)).toEqual([['a'], ['b']]);
  });

  it('derives a trace with the one other trace its hint names a call of', () => {
    const given = items([
      { traceId: 'job-1', spanId: 's1' },
      { traceId: 'job-2', spanId: 's2', retryOf: 's1' },
      { traceId: 'other', spanId: 's3' },
    ]);
    expect(groupsOf(given)).toEqual([['job-1', 'job-2'], ['other']]);
  });

  it('links none when the span id its hint names is a call of several other traces: which one is unknowable', () => {
    const given = items([
      { traceId: 'hinting', spanId: 'h', retryOf: 's' },
      { traceId: 'first', spanId: 's' },
      { traceId: 'second', spanId: 's' },
    ]);
    expect(groupsOf(given)).toEqual([['first'], ['hinting'], ['second']]);
  });

  it('puts a chain of traces, each hinting the last, in one group (its roots found with path compression)', () => {
    const chain = Array.from({ length: 5_000 }, (_, i) => ({
      traceId: `t${i}`,
      spanId: `s${i}`,
      ...(i === 0 ? {} : { retryOf: `s${i - 1}` }),
    }));
    const groups = linkedTraceGroups(items(chain));
    expect(groups).toHaveLength(1);
    expect(groups[0]!.calls).toHaveLength(5_000);
  });
});
