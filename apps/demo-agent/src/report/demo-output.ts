/** The demo's console output: progress lines, the summary, Errata's figures and the lines to read the reports. */
import type { ErrataExportStats } from '@errata/sdk';
import { OUTCOMES } from '../agent/tool-call';
import type { PolicyName } from '../policies/agent-policy';
import type { PlayedRun } from '../scenarios/episode';
import {
  ESCALATION_TARGETS,
  escalationCount,
  failedCalls,
  SUBAGENT_STATUSES,
  type TallyCounts,
} from './policy-tally';

export const count = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

export const nonZero = (record: Readonly<Record<string, number>>): string =>
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

export interface ReportAccess {
  readonly url: string;
  readonly readKey: string | null;
  /** This run's first call, for `from=`. */
  readonly from: string;
  /** A trace of this run to show as a timeline (a research run: coordinator and subagents); null when none. */
  readonly traceId: string | null;
}

/** The report endpoints under `/api/v1`, each with the queries shown for it. */
/** The reads behind the demo's "Errata's reports on this run" lines (errata-reports.ts), each kept to the run. */
const RUN_QUERIES: readonly (readonly [path: string, query: string])[] = [
  ['reports/retry-waste', 'groupBy=category'],
  ['reports/retry-waste', 'groupBy=category&agent=naive'],
  ['reports/retry-waste', 'groupBy=category&agent=contract-aware'],
  ['reports/escalations', ''],
  ['reports/escalations', 'agent=naive'],
  ['reports/escalations', 'agent=contract-aware'],
  ['reports/misclassified-results', ''],
  ['reports/subagent-coverage', ''],
  ['findings', ''],
  ['servers', ''],
];

const REPORT_QUERIES: readonly (readonly [path: string, queries: readonly string[]])[] = [
  [
    'reports/retry-waste',
    [
      'groupBy=category',
      'groupBy=server',
      'groupBy=tool',
      'groupBy=category&agent=naive',
      'groupBy=category&agent=contract-aware',
    ],
  ],
  ['reports/escalations', ['', 'agent=naive']],
  ['reports/misclassified-results', ['']],
  ['reports/subagent-coverage', ['']],
  ['findings', ['']],
  ['servers', ['']],
];

/** The agent names the two policies run under (their runs' gen_ai.agent.name). */
const POLICY_AGENTS: readonly PolicyName[] = ['naive', 'contract-aware'];

export function reportAccessLines({ url, readKey, from, traceId }: ReportAccess): string[] {
  const key = readKey ?? '<read key>';
  const curl = (path: string, query: string) =>
    `  curl -s -H "Authorization: Bearer ${key}" "${url}/api/v1/${path}${query === '' ? '' : `?${query}`}"`;
  const lines = [
    'Reports:',
    `  dashboard    ${url}/   (sign in with the read key)`,
    // The dashboard's default window (24 hours) mixes every run and policy; these show this run, policy by policy.
    `               ${url}/?from=${encodeURIComponent(from)}   (this run)`,
    ...POLICY_AGENTS.map(
      (agent) =>
        `               ${url}/retry-waste?from=${encodeURIComponent(from)}&agent=${agent}   (the ${agent} policy)`,
    ),
    ...(traceId === null
      ? []
      : [`               ${url}/traces/${traceId}   (one research run as a timeline)`]),
    `  REST API     ${url}/docs   (OpenAPI; every /api/v1 request needs the read key as a Bearer token)`,
    `  MCP          ${url}/mcp   (Errata's own MCP endpoint, Streamable HTTP, read key as a Bearer token)`,
    `  health       ${url}/healthz`,
    '',
    `  curl -s ${url}/healthz`,
    ...REPORT_QUERIES.flatMap(([path, queries]) => queries.map((query) => curl(path, query))),
    '',
    '  These cover everything this Errata has stored. This run only, from its first call (the figures above):',
    ...RUN_QUERIES.map(([path, query]) =>
      curl(path, query === '' ? `from=${from}` : `${query}&from=${from}`),
    ),
    ...(traceId === null
      ? []
      : ['  One research run (coordinator and subagents) as a timeline:', curl(`traces/${traceId}`, '')]),
  ];
  if (readKey === null) {
    lines.push(
      '',
      'ERRATA_READ_KEY was not given, so <read key> above is a placeholder: use a read key of the project the',
      'ingest key belongs to (an Errata an earlier `npm run demo` started printed one under "Keys of project',
      '"default""), or make one with `npm run errata -- keys create --project <project> --scope read`.',
    );
  }
  return lines;
}
