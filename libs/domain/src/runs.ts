/**
 * Agent-run resolution (DOMAIN.md §5 "Agent run"): a span's run is its nearest ancestor-or-self
 * `invoke_agent` span; without one, the trace is the run.
 */
import type { AgentRole } from './events';

export interface RunNodeAgent {
  readonly name: string | null;
  readonly id: string | null;
  readonly role: AgentRole | null;
}

/** One span as run resolution sees it: tool calls, agent spans (with `agent`), and bare edges of other spans. */
export interface RunNode {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | null;
  /** Present (non-null) exactly for invoke_agent spans. */
  readonly agent?: RunNodeAgent | null;
}

export interface RunRef {
  /** The agent span id, or `trace:<traceId>` when the trace is the run. */
  readonly runId: string;
  readonly traceId: string;
  /** The invoke_agent span, null for a trace run. */
  readonly agentSpanId: string | null;
  readonly agentName: string | null;
  readonly agentId: string | null;
  readonly role: AgentRole | null;
  /** Role `subagent`, or the agent span has another agent span as an ancestor. */
  readonly isSubagent: boolean;
  /** The run of the nearest ancestor agent span (the coordinator's run), when there is one. */
  readonly parentRunId: string | null;
}

export const traceRunId = (traceId: string): string => `trace:${traceId}`;

/**
 * Resolves the run of every node, keyed by span id. Parents are looked up in the same trace only; a parent
 * missing from `nodes` ends the walk there (the remaining ancestry is unknown), and so does a cycle. When the
 * same span appears twice, the last occurrence's edge and agent win (an agent, once seen, is kept).
 */
export function resolveRuns(nodes: readonly RunNode[]): Map<string, RunRef> {
  const byTrace = new Map<string, Map<string, RunNode>>();
  for (const node of nodes) {
    let trace = byTrace.get(node.traceId);
    if (trace === undefined) byTrace.set(node.traceId, (trace = new Map()));
    const previous = trace.get(node.spanId);
    trace.set(
      node.spanId,
      node.agent == null && previous?.agent != null ? { ...node, agent: previous.agent } : node,
    );
  }
  const runs = new Map<string, RunRef>();
  for (const [traceId, spans] of byTrace) {
    const nearest = nearestAgents(spans);
    const runOfAgent = new Map<string, RunRef>();
    const agentRun = (agentSpanId: string): RunRef => {
      const cached = runOfAgent.get(agentSpanId);
      if (cached !== undefined) return cached;
      const node = spans.get(agentSpanId);
      const parentSpanId = node?.parentSpanId ?? null;
      const parentAgent = parentSpanId === null ? null : (nearest.get(parentSpanId) ?? null);
      // A parent agent on a cycle back to this span is no ancestor.
      const ancestor = parentAgent !== null && parentAgent !== agentSpanId ? parentAgent : null;
      const run: RunRef = {
        runId: agentSpanId,
        traceId,
        agentSpanId,
        agentName: node?.agent?.name ?? null,
        agentId: node?.agent?.id ?? null,
        role: node?.agent?.role ?? null,
        isSubagent: node?.agent?.role === 'subagent' || ancestor !== null,
        parentRunId: ancestor,
      };
      runOfAgent.set(agentSpanId, run);
      return run;
    };
    const traceRun: RunRef = {
      runId: traceRunId(traceId),
      traceId,
      agentSpanId: null,
      agentName: null,
      agentId: null,
      role: null,
      isSubagent: false,
      parentRunId: null,
    };
    for (const spanId of spans.keys()) {
      const agentSpanId = nearest.get(spanId) ?? null;
      runs.set(spanId, agentSpanId === null ? traceRun : agentRun(agentSpanId));
    }
  }
  return runs;
}

/**
 * For every span of one trace, the span id of its nearest ancestor-or-self agent span, or null. Each walk
 * stops at a resolved span, an agent, a missing parent or a cycle, and memoizes the whole path: linear time.
 */
function nearestAgents(spans: ReadonlyMap<string, RunNode>): Map<string, string | null> {
  const nearest = new Map<string, string | null>();
  // One walk's buffers, emptied for each start: a long trace has many spans, most of them one step from an answer.
  const path: string[] = [];
  const onPath = new Set<string>();
  for (const start of spans.keys()) {
    if (nearest.has(start)) continue;
    path.length = 0;
    onPath.clear();
    let current: string | null = start;
    let found: string | null = null;
    while (current !== null) {
      const known = nearest.get(current);
      if (known !== undefined) {
        found = known;
        break;
      }
      const node = spans.get(current);
      if (node === undefined || onPath.has(current)) break;
      if (node.agent != null) {
        found = current;
        break;
      }
      path.push(current);
      onPath.add(current);
      current = node.parentSpanId;
    }
    for (const spanId of path) nearest.set(spanId, found);
    if (found !== null && spans.get(found)?.agent != null) nearest.set(found, found);
  }
  return nearest;
}
