import {
  contributionsOf,
  deriveTraceFacts,
  resolveRuns,
  traceRunId,
  type AgentRole,
  type CallFinding,
  type Contributions,
  type EscalationFact,
  type FindingCall,
  type FindingReportFact,
  type Outcome,
  type RetryCategory,
  type RunAgent,
  type RunRef,
  type TraceFacts,
  type SubagentStatus,
} from '@errata/domain';
import { unixMicros } from '../database/timestamps';
import type { ContributionRow } from '../repositories/rollup.repository';
import type { TraceItems } from '../repositories/trace-items.repository';

/**
 * The contributions of whole traces, from their stored items: runs resolved over every span of each trace
 * (DOMAIN.md §5), then the pure derivation and contributions of @errata/domain. Pure.
 */
export function traceContributions(items: TraceItems, options: { windowMs: number }): ContributionRow[] {
  const projects = new Set(
    [...items.calls, ...items.escalations, ...items.reports].map((item) => item.projectId),
  );
  return [...projects]
    .sort((a, b) => a - b)
    .flatMap((projectId) => {
      const ofProject = <T extends { projectId: number }>(rows: readonly T[]) =>
        rows.filter((row) => row.projectId === projectId);
      const contributions = projectContributions(
        {
          calls: ofProject(items.calls),
          escalations: ofProject(items.escalations),
          reports: ofProject(items.reports),
          agents: ofProject(items.agents),
          edges: ofProject(items.edges),
        },
        options,
      );
      return contributionRows(projectId, contributions);
    });
}

function projectContributions(items: TraceItems, options: { windowMs: number }): Contributions {
  const calls: Contributions['calls'][number][] = [];
  const findings: Contributions['findings'][number][] = [];
  const reports: Contributions['reports'][number][] = [];
  for (const group of linkedTraceGroups(items)) {
    const { facts, agents } = traceFactsOf(group);
    const derivation = deriveTraceFacts(facts, options);
    const contributions = contributionsOf(
      facts,
      derivation,
      (runId) => agents.get(runId) ?? { name: null, id: null },
    );
    calls.push(...contributions.calls);
    findings.push(...contributions.findings);
    reports.push(...contributions.reports);
  }
  return { calls, findings, reports };
}

/**
 * One project's items split into the groups derived together: each trace alone, or with the traces its hinted
 * retries link it to (a call whose `errata.retry.of` names a call of exactly one other trace, and none of its own;
 * a span id several other traces have names no call for sure, and links none). The derivation knows spans by their
 * span id, which OTLP makes unique within a trace only: two unlinked traces that reuse span ids (a replay tool, a
 * fixed id generator) would be mixed, and the reports would depend on which traces a batch happened to hold.
 * Linear: the groups' roots are found with path compression (a long chain of hinted traces costs no more).
 */
export function linkedTraceGroups(items: TraceItems): TraceItems[] {
  // A trace's entry names the trace it was linked to; a trace without one is its group's root.
  const linkedTo = new Map<string, string>();
  const find = (traceId: string): string => {
    let top = traceId;
    for (let up = linkedTo.get(top); up !== undefined; up = linkedTo.get(top)) top = up;
    for (let at = traceId; at !== top;) {
      const next = linkedTo.get(at)!;
      linkedTo.set(at, top);
      at = next;
    }
    return top;
  };
  const tracesOfCall = new Map<string, Set<string>>();
  for (const call of items.calls) {
    let traces = tracesOfCall.get(call.spanId);
    if (traces === undefined) tracesOfCall.set(call.spanId, (traces = new Set()));
    traces.add(call.traceId);
  }
  for (const call of items.calls) {
    const named = call.retryOf === null ? undefined : tracesOfCall.get(call.retryOf);
    if (named === undefined || named.size !== 1 || named.has(call.traceId)) continue;
    const [other] = named;
    const [from, to] = [find(other!), find(call.traceId)];
    if (from !== to) linkedTo.set(from, to);
  }
  const groups = new Map<string, TraceItems>();
  const groupOf = (traceId: string): TraceItems => {
    const key = find(traceId);
    let group = groups.get(key);
    if (group === undefined)
      groups.set(key, (group = { calls: [], escalations: [], reports: [], agents: [], edges: [] }));
    return group;
  };
  for (const row of items.calls) groupOf(row.traceId).calls.push(row);
  for (const row of items.escalations) groupOf(row.traceId).escalations.push(row);
  for (const row of items.reports) groupOf(row.traceId).reports.push(row);
  for (const row of items.agents) groupOf(row.traceId).agents.push(row);
  for (const row of items.edges) groupOf(row.traceId).edges.push(row);
  return [...groups.values()];
}

/**
 * The facts of one project's whole traces as the pure derivation takes them, with every span's run resolved
 * (DOMAIN.md §5) and each run's agent.
 */
export function traceFactsOf(items: TraceItems): {
  facts: TraceFacts;
  runs: Map<string, RunRef>;
  agents: Map<string, RunAgent>;
} {
  const runs = resolveRuns([
    ...[...items.calls, ...items.escalations, ...items.reports, ...items.edges].map((row) => ({
      traceId: row.traceId,
      spanId: row.spanId,
      parentSpanId: row.parentSpanId,
    })),
    ...items.agents.map((agent) => ({
      traceId: agent.traceId,
      spanId: agent.spanId,
      parentSpanId: agent.parentSpanId,
      agent: { name: agent.agentName, id: agent.agentId, role: agent.role as AgentRole | null },
    })),
  ]);
  const runIdOf = (row: { spanId: string; traceId: string }) =>
    runs.get(row.spanId)?.runId ?? traceRunId(row.traceId);
  const agents = new Map<string, RunAgent>();
  const subagentRuns = new Set<string>();
  const parentRuns = new Map<string, string>();
  for (const run of runs.values()) {
    agents.set(run.runId, { name: run.agentName, id: run.agentId });
    if (run.isSubagent) subagentRuns.add(run.runId);
    if (run.parentRunId !== null) parentRuns.set(run.runId, run.parentRunId);
  }

  const calls = items.calls.map((call): FindingCall => ({
    key: call.spanId,
    parentKey: call.parentSpanId,
    serverSide: call.serverSide,
    traceId: call.traceId,
    runId: runIdOf(call),
    server: call.serverName,
    tool: call.tool,
    outcome: call.outcome as Outcome,
    category: call.category as RetryCategory | null,
    startNs: BigInt(call.startNs),
    endNs: BigInt(call.endNs),
    argsHash: call.argsHash,
    retryOf: call.retryOf,
    retryAfterMs: call.retryAfterMs,
    tokens: call.tokens,
    failureAsEmpty: call.failureAsEmpty,
    customerExplanation: call.customerExplanation,
    emptyAsError: call.emptyAsError,
    evidence: call.evidence,
    sampleText: call.sampleText,
    serverVersion: call.serverVersion,
    declaredRetryable: declaredRetryableOf(call),
    findings: call.findings as CallFinding[],
  }));
  const escalations = items.escalations.map((row): EscalationFact => ({
    key: row.spanId,
    traceId: row.traceId,
    runId: runIdOf(row),
    target: row.target as EscalationFact['target'],
    startNs: BigInt(row.startNs),
  }));
  const reports = items.reports.map((row): FindingReportFact => ({
    key: row.spanId,
    runId: runIdOf(row),
    status: row.status as SubagentStatus,
    completed: row.completed,
    total: row.total,
    category: row.category,
    attempted: (row.attempted as string[] | null) ?? null,
    alternatives: (row.alternatives as string[] | null) ?? null,
    partialResults: row.partialResults,
    agentName: runs.get(row.spanId)?.agentName ?? null,
    traceId: row.traceId,
    startNs: BigInt(row.startNs),
  }));
  const callKeys = new Set(calls.map((call) => call.key));
  const delegatedRuns = new Map<string, string[]>();
  for (const agent of items.agents) {
    if (agent.parentSpanId === null || !callKeys.has(agent.parentSpanId)) continue;
    const runId = runs.get(agent.spanId)?.runId;
    if (runId === undefined) continue;
    delegatedRuns.set(agent.parentSpanId, [...(delegatedRuns.get(agent.parentSpanId) ?? []), runId]);
  }

  return { facts: { calls, escalations, reports, subagentRuns, delegatedRuns, parentRuns }, runs, agents };
}

/** The retryability a stored call's server declared (`retryable` is stored as text); null when implied or none. */
function declaredRetryableOf(call: {
  readonly retryable: string | null;
  readonly retryableSource: string | null;
}): boolean | null {
  if (call.retryableSource !== 'declared') return null;
  return call.retryable === 'true' ? true : call.retryable === 'false' ? false : null;
}

function contributionRows(projectId: number, contributions: Contributions): ContributionRow[] {
  const rows: ContributionRow[] = [];
  for (const c of contributions.calls) {
    rows.push(
      contributionRow(projectId, c, {
        kind: 'call',
        part: c.role,
        server: c.server,
        tool: c.tool,
        serverVersion: c.serverVersion,
        category: c.category,
        evidence: null,
        runId: null,
      }),
    );
  }
  for (const c of contributions.findings) {
    rows.push(
      contributionRow(projectId, c, {
        kind: 'finding',
        part: c.rule,
        server: c.server,
        tool: c.tool,
        serverVersion: c.serverVersion,
        category: null,
        evidence: c.evidence,
        runId: c.runId,
      }),
    );
  }
  for (const c of contributions.reports) {
    rows.push(
      contributionRow(projectId, c, {
        kind: 'report',
        part: 'report',
        server: null,
        tool: null,
        serverVersion: null,
        category: null,
        evidence: null,
        runId: null,
      }),
    );
  }
  return rows;
}

type RowDimensions = Pick<
  ContributionRow,
  'kind' | 'part' | 'server' | 'tool' | 'serverVersion' | 'category' | 'evidence' | 'runId'
>;

/**
 * One row, every field written out: a literal built by spreading a shared part made V8 keep these 16-property
 * objects in dictionary mode (about 6 µs per row, the projector's largest JavaScript cost in `bench:ingest`).
 */
function contributionRow(
  projectId: number,
  item: Contributions['calls'][number] | Contributions['findings'][number] | Contributions['reports'][number],
  dimensions: RowDimensions,
): ContributionRow {
  return {
    projectId,
    traceId: item.traceId,
    spanId: item.key,
    kind: dimensions.kind,
    part: dimensions.part,
    startMicros: unixMicros(item.startNs),
    startNs: item.startNs.toString(),
    server: dimensions.server,
    tool: dimensions.tool,
    serverVersion: dimensions.serverVersion,
    category: dimensions.category,
    evidence: dimensions.evidence,
    agentName: item.agentName,
    agentId: item.agentId,
    runId: dimensions.runId,
    measures: nonZero(item.measures),
  };
}

/** Only the measures a contribution adds to: most of a contribution's counts are zero. */
function nonZero(measures: Readonly<Record<string, number | undefined>>): Record<string, number> {
  const kept: Record<string, number> = {};
  // `for…in`, not `Object.entries`: this runs for every row of a long trace at every batch.
  for (const measure in measures) {
    const value = measures[measure];
    if (value) kept[measure] = value;
  }
  return kept;
}
