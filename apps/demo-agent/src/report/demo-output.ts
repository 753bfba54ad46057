/** The demo's console output: progress lines, the summary, Errata's figures and the lines to read the reports. */
import type { ErrataExportStats } from '@errata/sdk';
import { OUTCOMES } from '../agent/tool-call';
import type { RetryWasteReport } from '../errata/errata-http';
import type { PolicyName } from '../policies/agent-policy';
import type { PlayedRun } from '../scenarios/episode';
import {
  ESCALATION_TARGETS,
  escalationCount,
  failedCalls,
  SUBAGENT_STATUSES,
  type TallyCounts,
} from './policy-tally';

const count = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

const nonZero = (record: Readonly<Record<string, number>>): string =>
  Object.entries(record)
    .filter(([, n]) => n > 0)
    .map(([key, n]) => `${key} ${n}`)
    .join(', ');

export function describeCounts(counts: TallyCounts): string {
  const handOffs = escalationCount(counts);
  return [
    `${count(counts.calls, 'call', 'calls')} (${nonZero(counts.outcomes)})`,
    count(counts.retries, 'retry', 'retries'),
    handOffs === 0
      ? 'no hand-off'
      : `${count(handOffs, 'hand-off', 'hand-offs')} (${nonZero(counts.escalations)})`,
  ].join(', ');
}

export function runLine(policy: PolicyName, run: PlayedRun): string {
  const reports = nonZero(run.counts.reports);
  return `  ${policy.padEnd(15)} ${run.scenario.padEnd(26)} ${describeCounts(run.counts)}${reports === '' ? '' : `; reports: ${reports}`}`;
}

type Column = readonly [PolicyName, TallyCounts];

interface Row {
  readonly label: string;
  readonly value: (counts: TallyCounts) => number;
}

const TARGET_LABELS = { human: 'a human', user: 'the user', coordinator: 'the coordinator' } as const;

export function summaryLines(episodes: number, columns: readonly Column[]): string[] {
  const rows: Row[] = [
    { label: 'tool calls', value: (c) => c.calls },
    // Outcomes no call had (timeouts, …) are left out.
    ...OUTCOMES.filter((outcome) => columns.some(([, c]) => c.outcomes[outcome] > 0)).map((outcome): Row => ({
      label: `  ${outcome}`,
      value: (c) => c.outcomes[outcome],
    })),
    { label: 'failed calls', value: failedCalls },
    { label: 'retries (calls made again)', value: (c) => c.retries },
    ...ESCALATION_TARGETS.map((target): Row => ({
      label: `hand-offs to ${TARGET_LABELS[target]}`,
      value: (c) => c.escalations[target],
    })),
    ...SUBAGENT_STATUSES.map((status): Row => ({
      label: `subagent reports: ${status}`,
      value: (c) => c.reports[status],
    })),
  ];
  const cells = (values: readonly string[]) => values.map((value) => value.padStart(16)).join('');
  return [
    `${`Summary of ${count(episodes, 'episode', 'episodes')}`.padEnd(30)}${cells(columns.map(([name]) => name))}`,
    ...rows.map(
      ({ label, value }) => `  ${label.padEnd(28)}${cells(columns.map(([, c]) => String(value(c))))}`,
    ),
  ];
}

export const exportLine = (stats: ErrataExportStats): string =>
  `Spans sent to Errata: ${stats.exported} exported, ${stats.dropped} dropped, ${stats.failed} failed ` +
  `(${stats.filtered} other spans not sent).`;

function totalsLine(label: string, report: RetryWasteReport): string {
  const t = report.totals;
  return (
    `  ${label.padEnd(22)} ${count(t.calls, 'call', 'calls')}, ${count(t.retries, 'retry', 'retries')}, ` +
    `${t.wastedRetries} wasted (${t.wastedMs} ms), ${count(t.unrecoveredChains, 'unrecovered chain', 'unrecovered chains')}`
  );
}

export function reportLines(
  all: RetryWasteReport,
  byPolicy: readonly (readonly [PolicyName, RetryWasteReport])[],
): string[] {
  return [
    "Errata's retry-waste report for this run:",
    totalsLine('all agents', all),
    ...byPolicy.map(([policy, report]) => totalsLine(`agent=${policy}`, report)),
    '  by category of the retried call:',
    ...all.groups.map(
      (group) =>
        `    ${group.key.padEnd(11)} ${count(group.retries, 'retry', 'retries')}, ${group.wastedRetries} wasted — ${nonZero(group.reasons)}`,
    ),
  ];
}

export interface ReportAccess {
  readonly url: string;
  readonly readKey: string | null;
  /** This run's first call, for `from=`. */
  readonly from: string;
}

export function reportAccessLines({ url, readKey, from }: ReportAccess): string[] {
  const key = readKey ?? '<read key>';
  const curl = (query: string) =>
    `  curl -s -H "Authorization: Bearer ${key}" "${url}/api/v1/reports/retry-waste?${query}"`;
  const lines = [
    'Reports:',
    `  health       ${url}/healthz`,
    `  retry waste  ${url}/api/v1/reports/retry-waste?groupBy=category   (read key required)`,
    '',
    `  curl -s ${url}/healthz`,
    curl('groupBy=category'),
    curl('groupBy=server'),
    curl('groupBy=tool'),
    curl('groupBy=category&agent=naive'),
    curl('groupBy=category&agent=contract-aware'),
    `  (add &from=${from} to see this run only)`,
  ];
  if (readKey === null) {
    lines.push(
      '',
      'ERRATA_READ_KEY was not given, so <read key> above is a placeholder: use the read key printed at',
      "Errata's first start, or make one with `npm run errata -- keys create --project default --scope read`.",
    );
  }
  return lines;
}
