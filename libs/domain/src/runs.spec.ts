import { describe, expect, it } from 'vitest';

import { resolveRuns, traceRunId, type RunNode } from './runs';

const T = 'a'.repeat(32);
const node = (spanId: string, parentSpanId: string | null, agent?: RunNode['agent']): RunNode => ({
  traceId: T,
  spanId,
  parentSpanId,
  agent,
});

describe('resolveRuns', () => {
  it('given no agent span, then the trace is the run', () => {
    const runs = resolveRuns([node('root', null), node('call', 'root')]);
    expect(runs.get('call')).toEqual({
      runId: traceRunId(T),
      traceId: T,
      agentSpanId: null,
      agentName: null,
      agentId: null,
      role: null,
      isSubagent: false,
      parentRunId: null,
    });
  });

  it('given a tool call under intermediate spans, then its run is the nearest invoke_agent ancestor', () => {
    const runs = resolveRuns([
      node('call', 'llm'), // children before parents: order does not matter
      node('llm', 'step'),
      node('step', 'agent'),
      node('agent', 'http', { name: 'support', id: 'ag-1', role: 'coordinator' }),
      node('http', null),
    ]);
    expect(runs.get('call')).toMatchObject({
      runId: 'agent',
      agentSpanId: 'agent',
      agentName: 'support',
      agentId: 'ag-1',
      role: 'coordinator',
      isSubagent: false,
      parentRunId: null,
    });
    expect(runs.get('agent')?.runId).toBe('agent');
    expect(runs.get('http')?.runId).toBe(traceRunId(T));
  });

  it('given nested agents, then the inner one is a subagent run with the outer as parent', () => {
    const runs = resolveRuns([
      node('coord', null, { name: 'coordinator', id: null, role: null }),
      node('delegate', 'coord'),
      node('sub', 'delegate', { name: 'researcher', id: null, role: null }),
      node('sub-call', 'sub'),
      node('coord-call', 'coord'),
    ]);
    expect(runs.get('sub-call')).toMatchObject({ runId: 'sub', isSubagent: true, parentRunId: 'coord' });
    expect(runs.get('coord-call')).toMatchObject({ runId: 'coord', isSubagent: false, parentRunId: null });
  });

  it('given role subagent on a top-level agent span, then it is a subagent run', () => {
    const runs = resolveRuns([
      node('sub', null, { name: 'researcher', id: null, role: 'subagent' }),
      node('c', 'sub'),
    ]);
    expect(runs.get('c')).toMatchObject({ runId: 'sub', isSubagent: true, parentRunId: null });
  });

  it('given a missing parent, then the walk stops there and the trace is the run', () => {
    const runs = resolveRuns([
      node('call', 'not-received'),
      node('agent', null, { name: 'a', id: null, role: null }),
    ]);
    expect(runs.get('call')?.runId).toBe(traceRunId(T));
  });

  it('given a cycle, then it terminates and the spans on it fall back to the trace run', () => {
    const runs = resolveRuns([node('x', 'y'), node('y', 'z'), node('z', 'x'), node('w', 'x')]);
    for (const id of ['x', 'y', 'z', 'w']) expect(runs.get(id)?.runId).toBe(traceRunId(T));
  });

  it('given an agent span on a cycle with itself, then it is not its own ancestor', () => {
    const runs = resolveRuns([node('a', 'b', { name: 'a', id: null, role: null }), node('b', 'a')]);
    expect(runs.get('b')).toMatchObject({ runId: 'a', isSubagent: false, parentRunId: null });
  });

  it('resolves parents within the same trace only', () => {
    const other = 'b'.repeat(32);
    const runs = resolveRuns([
      { traceId: other, spanId: 'agent', parentSpanId: null, agent: { name: 'a', id: null, role: null } },
      node('call', 'agent'),
    ]);
    expect(runs.get('call')?.runId).toBe(traceRunId(T));
  });

  it('keeps agent information when a span is seen again as a bare edge', () => {
    const runs = resolveRuns([
      node('agent', null, { name: 'a', id: null, role: null }),
      node('agent', null),
      node('c', 'agent'),
    ]);
    expect(runs.get('c')?.runId).toBe('agent');
  });
});
