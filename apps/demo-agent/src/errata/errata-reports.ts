/**
 * Errata's reports on one demo run: the four reports of DOMAIN.md §2–§4 (retry waste and escalations also per
 * agent policy), the findings and the server scorecard, all from the run's first call on.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { DemoError } from '../demo-error';
import { fetchReport, type ErrataReports, type ReportPath } from './errata-http';

/** What the agent runtime itself counted; Errata's reports are read once they hold all of it. */
export interface RunTotals {
  readonly calls: number;
  readonly escalations: number;
  readonly subagentReports: number;
}

export interface RunReports {
  readonly retryWaste: ErrataReports['reports/retry-waste'];
  readonly escalations: ErrataReports['reports/escalations'];
  readonly misclassified: ErrataReports['reports/misclassified-results'];
  readonly subagentCoverage: ErrataReports['reports/subagent-coverage'];
  readonly findings: ErrataReports['findings'];
  readonly servers: ErrataReports['servers'];
  /** Per agent policy, in the order asked for. */
  readonly byAgent: readonly AgentReports[];
  /** What Errata had not projected yet when the wait ended; zero everywhere when it had it all. */
  readonly missing: RunTotals;
}

export interface AgentReports {
  readonly agent: string;
  readonly retryWaste: ErrataReports['reports/retry-waste'];
  readonly escalations: ErrataReports['reports/escalations'];
}

const POLL_MS = 250;
/** Enough for the longest page Errata serves: the summary counts findings by rule. */
const FINDINGS_LIMIT = '500';

export interface RunReportsRequest {
  readonly url: string;
  readonly readKey: string;
  /** The run's first call (ISO-8601), for `from`. */
  readonly from: string;
  readonly agents: readonly string[];
  readonly expected: RunTotals;
  readonly waitMs: number;
}

/**
 * Errata projects what it ingests within a poll interval: polls the three reports that count what the runtime
 * counted until they hold all of it (or `waitMs` has passed), then reads the rest.
 */
export async function waitForRunReports(request: RunReportsRequest): Promise<RunReports> {
  const { url, readKey, from, agents, expected } = request;
  const read = async <P extends ReportPath>(path: P, query: Record<string, string> = {}) => {
    const { status, report } = await fetchReport(url, readKey, path, { ...query, from });
    if (report === null) throw new DemoError(`Errata answered ${status} to GET /api/v1/${path}`);
    return report;
  };
  const deadline = Date.now() + request.waitMs;
  for (;;) {
    const [retryWaste, escalations, subagentCoverage] = await Promise.all([
      read('reports/retry-waste', { groupBy: 'category' }),
      read('reports/escalations'),
      read('reports/subagent-coverage'),
    ]);
    const missing: RunTotals = {
      calls: Math.max(0, expected.calls - retryWaste.totals.calls),
      escalations: Math.max(0, expected.escalations - escalations.totals.escalations),
      subagentReports: Math.max(0, expected.subagentReports - subagentCoverage.reports),
    };
    const complete = Object.values(missing).every((n) => n === 0);
    if (complete || Date.now() > deadline) {
      const [misclassified, findings, servers, byAgent] = await Promise.all([
        read('reports/misclassified-results'),
        read('findings', { limit: FINDINGS_LIMIT }),
        read('servers'),
        Promise.all(
          agents.map(async (agent) => ({
            agent,
            retryWaste: await read('reports/retry-waste', { groupBy: 'category', agent }),
            escalations: await read('reports/escalations', { agent }),
          })),
        ),
      ]);
      return {
        retryWaste,
        escalations,
        misclassified,
        subagentCoverage,
        findings,
        servers,
        byAgent,
        missing,
      };
    }
    await sleep(POLL_MS);
  }
}
