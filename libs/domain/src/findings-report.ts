/**
 * Error-contract findings (DOMAIN.md §7, detection and evidence): one finding per (server, tool, rule), from the
 * calls' own findings (`detectCallFindings`, stored by the projection), the subagent case of failure-as-empty,
 * and subagent reports missing propagation context (keyed by the subagent's name, with no server).
 * Pure and order-independent; a finding's id is stable across rebuilds.
 */
import * as crypto from 'node:crypto';
import type { CallFinding } from './call-findings';
import type { EscalationFact } from './escalation-report';
import { compareVersions } from './fix-lifecycle';
import type { MisclassificationCall } from './misclassified-report';
import {
  contributionsInMemory,
  FINDING_MEASURES,
  offenceKey,
  offenceSample,
  offenceTimelines,
  sumContributions,
  totalOf,
  traceFactsOfCalls,
  UNNAMED_SUBAGENT,
  type CallMeasure,
  type FindingSums,
  type OffenceTimeline,
  type SummedContributions,
} from './report-contributions';
import { RULES_VERSION, FINDING_RULES, type FindingRule } from './rules';
import type { SubagentReportFact } from './subagent-coverage-report';
import { nsToMs } from './retry-waste-report';
import { compareText, isoFromNs } from './report-order';

/** A call as the findings report reads it. */
export interface FindingCall extends MisclassificationCall {
  /** The span id of the call's parent span (null for a root): it tells a server's view of a call (`deriveTraceFacts`). */
  readonly parentKey: string | null;
  /** Recorded by the MCP server's own instrumentation (Sentry's), not the client's: it may be a second view. */
  readonly serverSide: boolean;
  readonly serverVersion: string | null;
  /** The retryability the server declared for a failed call (`isRetryable`); null when it declared none. */
  readonly declaredRetryable: boolean | null;
  readonly findings: readonly CallFinding[];
}

/** A subagent report, with the subagent that made it and when. */
export interface FindingReportFact extends SubagentReportFact {
  readonly agentName: string | null;
  readonly traceId: string;
  readonly startNs: bigint;
}

export interface FindingSample {
  readonly traceId: string;
  readonly spanId: string;
  readonly runId: string;
  readonly startTime: string;
  readonly evidence: string;
  readonly text: string | null;
}

export interface Finding {
  /** Stable: derived from (server, tool, rule). */
  readonly id: string;
  readonly server: string | null;
  readonly tool: string;
  readonly rule: FindingRule;
  /** Offending calls (or reports). */
  readonly count: number;
  /** count / all calls of the tool (reports: / partial and failed reports of the subagent). */
  readonly rate: number;
  readonly firstSeen: string;
  readonly lastSeen: string;
  readonly serverVersions: readonly string[];
  /** Evidence values and how often each was seen, most frequent first. */
  readonly evidence: Readonly<Record<string, number>>;
  readonly retriesCaused: number;
  readonly wastedRetries: number;
  readonly wastedMs: number;
  readonly escalationsCaused: number;
  readonly samples: readonly FindingSample[];
}

export interface FindingsReport {
  readonly rulesVersion: number;
  readonly findings: readonly Finding[];
}

export interface FindingsOptions {
  readonly windowMs?: number;
  readonly delegatedRuns?: ReadonlyMap<string, readonly string[]>;
  /** Samples per finding (the earliest). Default 3. */
  readonly samples?: number;
}

/** A finding's id: the first 20 hex digits of SHA-256 over (server, tool, rule), the same after every rebuild. */
export const findingId = (server: string | null, tool: string, rule: FindingRule): string =>
  crypto
    .createHash('sha256')
    .update(JSON.stringify([server, tool, rule]))
    .digest('hex')
    .slice(0, 20);

export function findingsReport(
  calls: readonly FindingCall[],
  reports: readonly FindingReportFact[],
  escalations: readonly EscalationFact[],
  options: FindingsOptions = {},
): FindingsReport {
  const facts = traceFactsOfCalls(calls, {
    reports,
    escalations,
    delegatedRuns: options.delegatedRuns ?? new Map(),
  });
  const contributions = contributionsInMemory(facts, options);
  return findingsFromSums(
    sumContributions(contributions),
    offenceTimelines(contributions.findings, options.samples ?? 3),
  );
}

/** The call measures `findingsFromSums` reads (rate denominators); `failures` also gives a tool's usual category. */
export const FINDINGS_CALL_MEASURES: readonly CallMeasure[] = ['calls', 'failures'];

/**
 * The findings from summed contributions, with each finding's first and last offence and samples from
 * `timelines`. Rates: over all calls of the tool, or for missing propagation context over the subagent's
 * partial and failed reports.
 */
export function findingsFromSums(
  sums: SummedContributions,
  timelines: ReadonlyMap<string, OffenceTimeline>,
): FindingsReport {
  const callsPerTool = new Map<string, bigint>();
  for (const row of sums.calls) {
    const key = JSON.stringify([row.server, row.tool]);
    callsPerTool.set(key, (callsPerTool.get(key) ?? 0n) + row.sums.calls);
  }
  const reportsPerAgent = new Map<string, bigint>();
  for (const row of sums.reports) {
    const agent = row.agentName ?? UNNAMED_SUBAGENT;
    reportsPerAgent.set(agent, (reportsPerAgent.get(agent) ?? 0n) + row.sums.failure_reports);
  }
  const groups = new Map<string, FindingSums[]>();
  for (const row of sums.findings) {
    if (row.sums.offences === 0n) continue;
    const key = offenceKey(row.server, row.tool, row.rule);
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }

  const findings: Finding[] = [];
  for (const [key, rows] of groups) {
    const timeline = timelines.get(key);
    if (timeline === undefined) continue;
    const { server, tool, rule } = rows[0]!;
    const total = totalOf(rows, FINDING_MEASURES);
    const count = Number(total.offences);
    const evidence = new Map<string, number>();
    for (const row of rows)
      evidence.set(row.evidence, (evidence.get(row.evidence) ?? 0) + Number(row.sums.offences));
    const denominator = Number(
      rule === 'missing-propagation-context'
        ? (reportsPerAgent.get(tool) ?? 0n)
        : (callsPerTool.get(JSON.stringify([server, tool])) ?? 0n),
    );
    const versions = new Set(
      rows
        .filter((row) => row.sums.offences > 0n && row.serverVersion !== null)
        .map((row) => row.serverVersion!),
    );
    findings.push({
      id: findingId(server, tool, rule),
      server,
      tool,
      rule,
      count,
      rate: count / (denominator > 0 ? denominator : count),
      firstSeen: isoFromNs(timeline.earliest[0]!.startNs),
      lastSeen: isoFromNs(timeline.latest.startNs),
      serverVersions: [...versions].sort(compareVersions),
      evidence: Object.fromEntries(
        [...evidence.entries()]
          .filter(([, n]) => n > 0)
          .sort((a, b) => b[1] - a[1] || compareText(a[0], b[0])),
      ),
      retriesCaused: Number(total.retries_caused),
      wastedRetries: Number(total.wasted_retries),
      wastedMs: nsToMs(total.wasted_ns),
      escalationsCaused: Number(total.escalations_caused),
      samples: timeline.earliest.map(offenceSample),
    });
  }
  const ruleOrder = new Map(FINDING_RULES.map((rule, i) => [rule, i]));
  findings.sort(
    (a, b) =>
      b.count - a.count ||
      ruleOrder.get(a.rule)! - ruleOrder.get(b.rule)! ||
      compareText(a.server, b.server) ||
      compareText(a.tool, b.tool),
  );
  return { rulesVersion: RULES_VERSION, findings };
}
