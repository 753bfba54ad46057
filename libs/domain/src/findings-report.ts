/**
 * Error-contract findings (DOMAIN.md §7, detection and evidence): one finding per (server, tool, rule), from the
 * calls' own findings (`detectCallFindings`, stored by the projection), the subagent case of failure-as-empty,
 * and subagent reports missing propagation context (keyed by the subagent's name, with no server).
 * Pure and order-independent; a finding's id is stable across rebuilds.
 */
import * as crypto from 'node:crypto';
import type { CallFinding } from './call-findings';
import { escalationReport, type EscalationFact } from './escalation-report';
import { analyzeRetries, compareCalls } from './retries';
import type { MisclassificationCall } from './misclassified-report';
import { subagentHiddenFailures } from './misclassified-report';
import { RULES_VERSION, FINDING_RULES, type FindingRule } from './rules';
import { PROPAGATION_ELEMENTS, type SubagentReportFact } from './subagent-coverage-report';
import { nsToMs } from './retry-waste-report';
import { compareText, isoFromNs } from './report-order';

/** A call as the findings report reads it. */
export interface FindingCall extends MisclassificationCall {
  readonly serverVersion: string | null;
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

interface Offence {
  readonly startNs: bigint;
  readonly key: string;
  readonly evidence: string;
  readonly sample: FindingSample;
  readonly serverVersion: string | null;
}

export function findingsReport(
  calls: readonly FindingCall[],
  reports: readonly FindingReportFact[],
  escalations: readonly EscalationFact[],
  options: FindingsOptions = {},
): FindingsReport {
  const ordered = [...calls].sort(compareCalls);
  const { retries, chains } = analyzeRetries(ordered, options);
  const hidden = subagentHiddenFailures(ordered, chains, options.delegatedRuns);
  const escalationsOf = new Map<string, number>();
  for (const { call } of escalationReport(ordered, escalations, options).attributions) {
    if (call !== null) escalationsOf.set(call, (escalationsOf.get(call) ?? 0) + 1);
  }
  const retriesOf = new Map<string, { retries: number; wasted: number; wastedNs: bigint }>();
  for (const link of retries) {
    const entry = retriesOf.get(link.retryOf) ?? { retries: 0, wasted: 0, wastedNs: 0n };
    entry.retries++;
    if (link.wasted) {
      entry.wasted++;
      entry.wastedNs += link.durationNs;
    }
    retriesOf.set(link.retryOf, entry);
  }

  const callsPerTool = new Map<string, number>();
  const offences = new Map<
    string,
    { server: string | null; tool: string; rule: FindingRule; list: Offence[] }
  >();
  const add = (server: string | null, tool: string, rule: FindingRule, offence: Offence) => {
    const key = JSON.stringify([server, tool, rule]);
    const group = offences.get(key) ?? { server, tool, rule, list: [] };
    group.list.push(offence);
    offences.set(key, group);
  };

  for (const call of ordered) {
    const toolKey = JSON.stringify([call.server, call.tool]);
    callsPerTool.set(toolKey, (callsPerTool.get(toolKey) ?? 0) + 1);
    const findings = [...call.findings];
    if (hidden.has(call.key) && !findings.some((f) => f.rule === 'failure-as-empty')) {
      findings.push({ rule: 'failure-as-empty', evidence: 'failure:subagent_unrecovered' });
    }
    for (const finding of findings) {
      add(call.server, call.tool, finding.rule, {
        startNs: call.startNs,
        key: call.key,
        evidence: finding.evidence,
        serverVersion: call.serverVersion,
        sample: {
          traceId: call.traceId,
          spanId: call.key,
          runId: call.runId,
          startTime: isoFromNs(call.startNs),
          evidence: finding.evidence,
          text: call.sampleText,
        },
      });
    }
  }

  const reportsPerAgent = new Map<string, number>();
  for (const report of [...reports].sort((a, b) => compareText(a.key, b.key))) {
    if (report.status === 'complete') continue;
    const agent = report.agentName ?? '(unnamed subagent)';
    reportsPerAgent.set(agent, (reportsPerAgent.get(agent) ?? 0) + 1);
    const missing = PROPAGATION_ELEMENTS.filter((element) => {
      if (element === 'category') return report.category === null || report.category.trim() === '';
      if (element === 'partialResults') return report.partialResults === null || report.partialResults === '';
      return (report[element]?.length ?? 0) === 0;
    });
    if (missing.length === 0) continue;
    const evidence = `missing:${missing.join(',')}`;
    add(null, agent, 'missing-propagation-context', {
      startNs: report.startNs,
      key: report.key,
      evidence,
      serverVersion: null,
      sample: {
        traceId: report.traceId,
        spanId: report.key,
        runId: report.runId,
        startTime: isoFromNs(report.startNs),
        evidence,
        text: null,
      },
    });
  }

  const perSample = options.samples ?? 3;
  const findings: Finding[] = [];
  for (const group of offences.values()) {
    const list = [...group.list].sort((a, b) =>
      a.startNs !== b.startNs ? (a.startNs < b.startNs ? -1 : 1) : compareText(a.key, b.key),
    );
    const evidence = new Map<string, number>();
    let caused = { retries: 0, wasted: 0, wastedNs: 0n, escalations: 0 };
    for (const offence of list) {
      evidence.set(offence.evidence, (evidence.get(offence.evidence) ?? 0) + 1);
      const r = retriesOf.get(offence.key);
      caused = {
        retries: caused.retries + (r?.retries ?? 0),
        wasted: caused.wasted + (r?.wasted ?? 0),
        wastedNs: caused.wastedNs + (r?.wastedNs ?? 0n),
        escalations: caused.escalations + (escalationsOf.get(offence.key) ?? 0),
      };
    }
    const denominator =
      group.rule === 'missing-propagation-context'
        ? (reportsPerAgent.get(group.tool) ?? list.length)
        : (callsPerTool.get(JSON.stringify([group.server, group.tool])) ?? list.length);
    const versions = [
      ...new Set(list.map((o) => o.serverVersion).filter((v): v is string => v !== null)),
    ].sort();
    findings.push({
      id: findingId(group.server, group.tool, group.rule),
      server: group.server,
      tool: group.tool,
      rule: group.rule,
      count: list.length,
      rate: list.length / denominator,
      firstSeen: list[0]!.sample.startTime,
      lastSeen: list[list.length - 1]!.sample.startTime,
      serverVersions: versions,
      evidence: Object.fromEntries(
        [...evidence.entries()].sort((a, b) => b[1] - a[1] || compareText(a[0], b[0])),
      ),
      retriesCaused: caused.retries,
      wastedRetries: caused.wasted,
      wastedMs: nsToMs(caused.wastedNs),
      escalationsCaused: caused.escalations,
      samples: list.slice(0, perSample).map((o) => o.sample),
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
