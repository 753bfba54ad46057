import { describe, expect, it } from 'vitest';
import { MS, reportCall, T0, TRACE } from './fixtures.spec-helper';
import type { RunRef } from './runs';
import { deriveTraceFacts, type TraceFacts } from './trace-derivation';
import { traceTimeline, traceTimelinePage } from './trace-timeline';
import type { TimelinePosition } from './timeline-page';

const coordinator: RunRef = {
  runId: 'run-1',
  traceId: TRACE,
  agentSpanId: 'run-1',
  agentName: 'support',
  agentId: null,
  role: 'coordinator',
  isSubagent: false,
  parentRunId: null,
};
const subagent: RunRef = {
  ...coordinator,
  runId: 'run-2',
  agentSpanId: 'run-2',
  agentName: 'news',
  role: 'subagent',
  isSubagent: true,
  parentRunId: 'run-1',
};

describe('traceTimeline', () => {
  it('given a failed call, its blind retry and the escalation it caused, shows them in order with what was derived', () => {
    const facts: TraceFacts = {
      calls: [
        reportCall('c2', 300, 'tool_error', 'validation', { runId: 'run-1' }),
        reportCall('c1', 0, 'tool_error', 'validation', { runId: 'run-1', sampleText: 'invalid order id' }),
      ],
      escalations: [{ key: 'e1', traceId: TRACE, runId: 'run-1', target: 'human', startNs: T0 + 900n * MS }],
      reports: [
        {
          key: 'r1',
          runId: 'run-2',
          status: 'partial',
          completed: 1,
          total: 4,
          category: null,
          attempted: ['search'],
          alternatives: null,
          partialResults: null,
          agentName: 'news',
          traceId: TRACE,
          startNs: T0 + 500n * MS,
        },
      ],
      subagentRuns: new Set(['run-2']),
      delegatedRuns: new Map(),
      parentRuns: new Map([['run-2', 'run-1']]),
    };
    const timeline = traceTimeline(
      TRACE,
      facts,
      deriveTraceFacts(facts),
      [subagent, coordinator],
      (spanId) =>
        spanId === 'c1'
          ? {
              categorySource: 'text',
              evidence: 'text.validation.invalid',
              text: 'invalid order id',
              arguments: '{"orderId":"#12"}',
            }
          : { categorySource: null, evidence: null, text: null, arguments: null },
    );

    expect(timeline.items.map((item) => [item.kind, item.spanId, item.runId])).toEqual([
      ['call', 'c1', 'run-1'],
      ['call', 'c2', 'run-1'],
      ['report', 'r1', 'run-2'],
      ['escalation', 'e1', 'run-1'],
    ]);
    const [first, retry, report, escalation] = timeline.items;
    expect(first).toMatchObject({
      retry: null,
      chainRecovered: false,
      escalationsCaused: 0,
      categorySource: 'text',
      evidence: 'text.validation.invalid',
      text: 'invalid order id',
      arguments: '{"orderId":"#12"}',
      durationMs: 100,
    });
    expect(retry).toMatchObject({
      retry: { of: 'c1', label: 'blind_retry', wasted: true },
      escalationsCaused: 1,
      text: null,
      arguments: null,
    });
    expect(report).toMatchObject({
      status: 'partial',
      missingElements: ['category', 'partialResults', 'alternatives'],
      silentPartial: false,
    });
    expect(escalation).toMatchObject({ target: 'human', attributedTo: 'c2', category: 'validation' });
    expect(timeline.runs.map((run) => [run.runId, run.startTime, run.endTime])).toEqual([
      ['run-1', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.900Z'],
      ['run-2', '2026-01-01T00:00:00.500Z', '2026-01-01T00:00:00.500Z'],
    ]);
  });

  it('given items of a run no agent span names (the trace is the run), still lists that run', () => {
    const facts: TraceFacts = {
      calls: [reportCall('c1', 0, 'ok', null, { runId: `trace:${TRACE}` })],
      escalations: [],
      reports: [],
      subagentRuns: new Set(),
      delegatedRuns: new Map(),
      parentRuns: new Map(),
    };
    const timeline = traceTimeline(TRACE, facts, deriveTraceFacts(facts), [], () => ({
      categorySource: null,
      evidence: null,
      text: null,
      arguments: null,
    }));
    expect(timeline.runs).toEqual([
      {
        runId: `trace:${TRACE}`,
        agentName: null,
        agentId: null,
        role: null,
        isSubagent: false,
        parentRunId: null,
        startTime: '2026-01-01T00:00:00.000Z',
        endTime: '2026-01-01T00:00:00.100Z',
        itemCount: 1,
      },
    ]);
  });
});

describe('traceTimelinePage', () => {
  const facts: TraceFacts = {
    calls: [
      reportCall('c1', 0, 'ok', null, { runId: 'run-1' }),
      reportCall('c2', 100, 'ok', null, { runId: 'run-2' }),
    ],
    escalations: [],
    reports: [],
    subagentRuns: new Set(['run-2']),
    delegatedRuns: new Map(),
    parentRuns: new Map([['run-2', 'run-1']]),
  };
  const pageOf = (run: string | null, position: TimelinePosition) =>
    traceTimelinePage(
      TRACE,
      facts,
      deriveTraceFacts(facts),
      [coordinator, subagent, { ...coordinator, runId: 'run-3', agentSpanId: 'run-3' }],
      { limit: 10, run, position },
      () => ({ categorySource: null, evidence: null, text: null, arguments: null }),
    );

  it('given a run the trace does not have, says the run is missing rather than answering an empty page', () => {
    expect(pageOf('run-9', { from: 'start' })).toEqual({ missing: 'run' });
    expect(pageOf('run-9', { from: 'span', spanId: 'c1' })).toEqual({ missing: 'run' });
  });

  it('given a run of the trace with no items, answers its empty page', () => {
    expect(pageOf('run-3', { from: 'start' })).toMatchObject({ items: [], page: { total: 0 } });
  });

  it('given a span the run does not hold, says which span is missing', () => {
    expect(pageOf('run-1', { from: 'span', spanId: 'c2' })).toEqual({ missing: 'span', spanId: 'c2' });
    expect(pageOf(null, { from: 'span', spanId: 'c2' })).toMatchObject({
      items: [{ spanId: 'c1' }, { spanId: 'c2' }],
    });
  });
});
