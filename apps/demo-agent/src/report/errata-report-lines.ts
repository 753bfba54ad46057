/** Errata's reports on the demo run, as the console shows them: a few lines per report. */
import type { RetryWasteReport } from '@errata/domain';
import type { ErrataReports } from '../errata/errata-http';
import type { RunReports } from '../errata/errata-reports';
import { count, nonZero } from './demo-output';

/** Findings listed one per line; the rest are only counted. */
const FINDINGS_SHOWN = 8;

const percent = (rate: number | null): string => (rate === null ? '—' : `${Math.round(rate * 100)}%`);
const label = (text: string): string => `    ${text.padEnd(22)} `;
const serverName = (server: string | null): string => server ?? '(unnamed server)';

function retryWasteTotals(report: RetryWasteReport): string {
  const t = report.totals;
  return (
    `${count(t.calls, 'call', 'calls')}, ${count(t.retries, 'retry', 'retries')}, ` +
    `${t.wastedRetries} wasted (${t.wastedMs} ms), ${count(t.unrecoveredChains, 'unrecovered chain', 'unrecovered chains')}`
  );
}

function escalationTotals(report: ErrataReports['reports/escalations']): string {
  const t = report.totals;
  return (
    `${count(t.escalations, 'hand-off', 'hand-offs')} after ${count(t.failures, 'failed call', 'failed calls')} ` +
    `(rate ${percent(t.rate)}): ${t.attributed} attributed, ${t.avoidable} avoidable`
  );
}

function retryWasteLines(reports: RunReports): string[] {
  return [
    '  Retry waste',
    label('all agents') + retryWasteTotals(reports.retryWaste),
    ...reports.byAgent.map(({ agent, retryWaste }) => label(`agent=${agent}`) + retryWasteTotals(retryWaste)),
    '    by category of the retried call:',
    ...reports.retryWaste.groups.map(
      (group) =>
        `      ${group.key.padEnd(11)} ${count(group.retries, 'retry', 'retries')}, ${group.wastedRetries} wasted — ${nonZero(group.reasons)}`,
    ),
  ];
}

function escalationLines({ escalations, byAgent }: RunReports): string[] {
  const categories = escalations.byCategory
    .filter((row) => row.failures > 0 || row.escalations > 0)
    .map(
      (row) =>
        `${row.category} ${row.escalations} of ${row.failures} (${percent(row.rate)}` +
        `${row.avoidable > 0 ? `, ${row.avoidable} avoidable` : ''})`,
    );
  return [
    '  Escalations',
    label('all agents') + escalationTotals(escalations),
    ...byAgent.map(({ agent, escalations: report }) => label(`agent=${agent}`) + escalationTotals(report)),
    `    to: ${nonZero(escalations.byTarget) || 'nobody'}`,
    `    by category of the failed call: ${categories.join(', ') || 'no failed calls'}`,
  ];
}

function misclassifiedLines({ misclassified }: RunReports): string[] {
  const t = misclassified.totals;
  return [
    '  Misclassified results',
    `    ${t.emptyAsError} empty-as-error and ${t.failureAsEmpty} failure-as-empty results in ${count(t.calls, 'call', 'calls')}`,
    ...misclassified.groups.map(
      (group) =>
        `    ${serverName(group.server)} ${group.tool}, of ${count(group.calls, 'call', 'calls')}: ` +
        `${group.emptyAsError} empty-as-error, ${group.failureAsEmpty} failure-as-empty; they triggered ` +
        `${count(group.retriesTriggered, 'retry', 'retries')}, ${count(group.escalationsTriggered, 'hand-off', 'hand-offs')}`,
    ),
  ];
}

function subagentLines({ subagentCoverage: r }: RunReports): string[] {
  return [
    '  Subagent coverage',
    `    ${count(r.reports, 'report', 'reports')} (complete ${r.complete}, partial ${r.partial}, failed ${r.failed}), ` +
      `mean coverage ${percent(r.meanCoverage)}`,
    `    propagation completeness ${percent(r.propagationCompleteness)} (most often missing: ${r.mostMissingElement ?? 'nothing'}), ` +
      `local absorption ${percent(r.localAbsorptionRate)} (${r.absorbedTransientFailures} of ${r.transientFailuresInSubagents} transient failures), ` +
      `${count(r.silentPartials, 'silent partial', 'silent partials')}`,
  ];
}

function findingLines({ findings, servers }: RunReports): string[] {
  const byRule: Record<string, number> = {};
  for (const finding of findings.findings) byRule[finding.rule] = (byRule[finding.rule] ?? 0) + 1;
  const listed = findings.findings.slice(0, FINDINGS_SHOWN);
  const more = findings.total - listed.length;
  return [
    `  Findings: ${findings.total}${findings.total === 0 ? '' : ` (${nonZero(byRule)})`}`,
    ...listed.map(
      (finding) =>
        `    ${`${serverName(finding.server)} ${finding.tool}`.padEnd(40)} ${finding.rule.padEnd(20)} ` +
        `${count(finding.count, 'call', 'calls')} (${percent(finding.rate)}), ${finding.wastedRetries} wasted retries`,
    ),
    ...(more > 0 ? [`    … and ${more} more`] : []),
    `  Server grades: ${servers.servers.map((server) => `${serverName(server.server)} ${server.grade}`).join(', ')}`,
  ];
}

export function errataReportLines(reports: RunReports): string[] {
  const lines = [
    "Errata's reports on this run:",
    ...retryWasteLines(reports),
    ...escalationLines(reports),
    ...misclassifiedLines(reports),
    ...subagentLines(reports),
    ...findingLines(reports),
  ];
  const { calls, escalations, subagentReports } = reports.missing;
  if (calls + escalations + subagentReports > 0) {
    lines.push(
      `  (Errata had not projected everything yet: ${calls} calls, ${escalations} hand-offs and ` +
        `${subagentReports} subagent reports were missing; run the curl lines below again)`,
    );
  }
  return lines;
}
