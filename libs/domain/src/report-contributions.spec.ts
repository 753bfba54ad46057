import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Outcome } from './events';
import type { EscalationFact } from './escalation-report';
import type { FindingCall, FindingReportFact } from './findings-report';
import { MS, reportCall, T0 } from './fixtures.spec-helper';
import {
  contributionsInMemory,
  contributionsOf,
  sumContributions,
  traceFactsOfCalls,
  type Contributions,
} from './report-contributions';
import type { RetryCategory } from './retries';
import { retryWasteFromSums } from './retry-waste-report';
import { deriveTraceFacts, type TraceFacts } from './trace-derivation';

const OUTCOMES: readonly [Outcome, RetryCategory | null][] = [
  ['ok', null],
  ['ok_empty', 'empty'],
  ['tool_error', 'transient'],
  ['tool_error', 'validation'],
  ['tool_error', 'business'],
  ['tool_error', 'empty'],
  ['tool_error', null],
  ['timeout', 'transient'],
];

/** Traces of a coordinator run and a subagent run, with calls, escalations and reports drawn by fast-check. */
const traces = fc
  .array(
    fc.record({
      calls: fc.array(
        fc.record({
          outcome: fc.nat(OUTCOMES.length - 1),
          tool: fc.constantFrom('search', 'refund'),
          sameArgs: fc.boolean(),
          inSubagent: fc.boolean(),
          gapMs: fc.integer({ min: 0, max: 900_000 }),
        }),
        { maxLength: 8 },
      ),
      escalateAtMs: fc.option(fc.integer({ min: 0, max: 3_000_000 }), { nil: null }),
      report: fc.option(fc.constantFrom('complete', 'partial', 'failed'), { nil: null }),
    }),
    { minLength: 1, maxLength: 5 },
  )
  .map((drawn): TraceFacts => {
    const calls: FindingCall[] = [];
    const escalations: EscalationFact[] = [];
    const reports: FindingReportFact[] = [];
    const delegatedRuns = new Map<string, string[]>();
    drawn.forEach((trace, t) => {
      const traceId = `trace-${t}`;
      let at = 0;
      trace.calls.forEach((call, c) => {
        at += call.gapMs;
        const [outcome, category] = OUTCOMES[call.outcome]!;
        calls.push(
          reportCall(`t${t}-c${c}`, at, outcome, category, {
            traceId,
            runId: call.inSubagent ? `sub-${t}` : `run-${t}`,
            tool: call.tool,
            argsHash: call.sameArgs ? 'same' : `args-${c}`,
            emptyAsError: outcome === 'tool_error' && category === 'empty',
          }),
        );
      });
      const delegate = calls.find((call) => call.traceId === traceId && call.outcome === 'ok');
      if (delegate) delegatedRuns.set(delegate.key, [`sub-${t}`]);
      if (trace.escalateAtMs !== null) {
        escalations.push({
          key: `t${t}-e`,
          traceId,
          runId: `run-${t}`,
          target: 'human',
          startNs: T0 + BigInt(trace.escalateAtMs) * MS,
        });
      }
      if (trace.report !== null) {
        reports.push({
          key: `t${t}-r`,
          runId: `sub-${t}`,
          status: trace.report,
          completed: 1,
          total: 3,
          category: null,
          attempted: null,
          alternatives: null,
          partialResults: null,
          agentName: 'researcher',
          traceId,
          startNs: T0 + BigInt(at) * MS,
        });
      }
    });
    const subagentRuns = new Set(drawn.map((_trace, t) => `sub-${t}`));
    const parentRuns = new Map(drawn.map((_trace, t) => [`sub-${t}`, `run-${t}`]));
    return { calls, escalations, reports, subagentRuns, delegatedRuns, parentRuns };
  });

const ofTrace = (facts: TraceFacts, traceId: string): TraceFacts => ({
  calls: facts.calls.filter((call) => call.traceId === traceId),
  escalations: facts.escalations.filter((escalation) => escalation.traceId === traceId),
  reports: facts.reports.filter((report) => report.traceId === traceId),
  subagentRuns: facts.subagentRuns,
  delegatedRuns: facts.delegatedRuns,
  parentRuns: facts.parentRuns,
});

const sorted = (contributions: Contributions) => ({
  calls: [...contributions.calls].sort((a, b) => `${a.key}/${a.role}`.localeCompare(`${b.key}/${b.role}`)),
  findings: [...contributions.findings].sort((a, b) =>
    `${a.key}/${a.rule}`.localeCompare(`${b.key}/${b.rule}`),
  ),
  reports: [...contributions.reports].sort((a, b) => a.key.localeCompare(b.key)),
});

describe('contributions', () => {
  it('given several traces, deriving each trace alone gives the contributions of deriving them together', () => {
    // This is what lets the projection re-derive only the traces a batch touched.
    fc.assert(
      fc.property(traces, (facts) => {
        const together = contributionsInMemory(facts);
        const traceIds = [...new Set(facts.calls.map((call) => call.traceId))];
        const alone = traceIds
          .concat(
            facts.escalations.map((e) => e.traceId),
            facts.reports.map((r) => r.traceId),
          )
          .filter((id, i, all) => all.indexOf(id) === i)
          .map((traceId) => contributionsInMemory(ofTrace(facts, traceId)));
        const merged = {
          calls: alone.flatMap((c) => c.calls),
          findings: alone.flatMap((c) => c.findings),
          reports: alone.flatMap((c) => c.reports),
        };
        expect(sorted(merged)).toEqual(sorted(together));
      }),
      { numRuns: 200 },
    );
  });

  it('given any split of the contributions, the sums of the parts shape the same report as the sum of all', () => {
    // Rollups are sums of hours and days: a report must not depend on how its contributions were grouped.
    fc.assert(
      fc.property(traces, fc.array(fc.boolean(), { minLength: 1, maxLength: 50 }), (facts, sides) => {
        const all = contributionsInMemory(facts);
        const parts = [0, 1].map((side) =>
          sumContributions({
            calls: all.calls.filter((_c, i) => Number(sides[i % sides.length]) === side),
            findings: [],
            reports: [],
          }),
        );
        const split = retryWasteFromSums([...parts[0]!.calls, ...parts[1]!.calls], 'category', () => []);
        expect(split).toEqual(retryWasteFromSums(sumContributions(all).calls, 'category', () => []));
      }),
      { numRuns: 200 },
    );
  });

  it('given a call re-sent with another start time, it contributes once', () => {
    const call = reportCall('same', 0, 'tool_error', 'transient');
    const facts = traceFactsOfCalls([call, { ...call, startNs: call.startNs + 5n }]);
    const contributions = contributionsOf(facts, deriveTraceFacts(facts), () => ({ name: null, id: null }));
    expect(contributions.calls.filter((c) => c.role === 'call')).toHaveLength(1);
  });

  it('given a server span under the client span of the same call (Sentry continuing the trace), it is one call, and retries link the client calls', () => {
    const client = (key: string, startMs: number) =>
      reportCall(key, startMs, 'protocol_error', 'validation', { argsHash: 'x' });
    // The server's view: inside the client's span, a child of it, the same tool.
    const server = (key: string, of: FindingCall) =>
      reportCall(key, 0, 'protocol_error', 'validation', {
        parentKey: of.key,
        serverSide: true,
        server: of.server,
        startNs: of.startNs + 1n * MS,
        endNs: of.endNs - 1n * MS,
        argsHash: 'x',
      });
    const a = client('a', 0);
    const b = client('b', 1_000);
    const { calls } = contributionsInMemory(
      traceFactsOfCalls([a, server('a-server', a), b, server('b-server', b)]),
    );
    expect(calls.filter((c) => c.role === 'call').map((c) => c.key)).toEqual(['a', 'b']);
    expect(calls.filter((c) => c.role === 'retry')).toMatchObject([
      { key: 'b', measures: { retries: 1, wasted_retries: 1, blind_retry: 1 } },
    ]);

    // A proxy serving the agent's call makes its own call upstream, of the same tool, under its server span: a call.
    const upstream = { ...client('upstream', 0), parentKey: 'a-server', server: 'upstream' };
    const proxied = contributionsInMemory(
      traceFactsOfCalls([a, server('a-server', a), upstream, server('upstream-server', upstream)]),
    );
    expect(proxied.calls.filter((c) => c.role === 'call').map((c) => c.key)).toEqual(['a', 'upstream']);

    // A gateway that forwards the call under the tool's own name, straight under the agent's span, to a server of
    // another name: two calls.
    const forwarded = { ...client('forwarded', 0), parentKey: 'a', server: 'upstream' };
    const gateway = contributionsInMemory(traceFactsOfCalls([{ ...a, server: 'gateway' }, forwarded]));
    expect(gateway.calls.filter((c) => c.role === 'call').map((c) => c.key)).toEqual(['a', 'forwarded']);

    // A tool whose handler calls the same tool of the same server again, both recorded by the client: two calls
    const inner = { ...client('inner', 0), parentKey: 'a' };
    const recursive = contributionsInMemory(traceFactsOfCalls([a, inner]));
    expect(recursive.calls.filter((c) => c.role === 'call').map((c) => c.key)).toEqual(['a', 'inner']);
  });

  it('given a retry, it counts under the retried call: category, server and tool, with its own start', () => {
    const first = reportCall('a', 0, 'tool_error', 'validation', { argsHash: 'x' });
    const retry = reportCall('b', 1_000, 'ok', null, { argsHash: 'y' });
    const { calls } = contributionsInMemory(traceFactsOfCalls([first, retry]));
    expect(calls.find((c) => c.role === 'retry')).toMatchObject({
      key: 'b',
      startNs: retry.startNs,
      category: 'validation',
      server: first.server,
      tool: first.tool,
      measures: { retries: 1, wasted_retries: 0, corrected: 1 },
    });
  });
});
