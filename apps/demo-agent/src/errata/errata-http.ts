/** The few HTTP calls the demo makes to Errata itself. */
import type {
  EscalationReport,
  Finding,
  MisclassifiedReport,
  RetryWasteReport,
  ServerScorecard,
  SubagentCoverageReport,
} from '@errata/domain';
import { DemoError, messageOf } from '../demo-error';

const REQUEST_TIMEOUT_MS = 5_000;

/** A page of `GET /api/v1/findings`: the findings without their samples. */
export interface FindingsPage {
  readonly rulesVersion: number;
  readonly total: number;
  readonly limit: number;
  readonly offset: number;
  readonly findings: readonly Omit<Finding, 'samples'>[];
}

/** The paths under `/api/v1` the demo reads, and what each answers (DOMAIN.md §8). */
export interface ErrataReports {
  readonly 'reports/retry-waste': RetryWasteReport;
  readonly 'reports/escalations': Omit<EscalationReport, 'attributions'>;
  readonly 'reports/misclassified-results': MisclassifiedReport;
  readonly 'reports/subagent-coverage': SubagentCoverageReport;
  readonly findings: FindingsPage;
  readonly servers: ServerScorecard;
}

export type ReportPath = keyof ErrataReports;

/** The status `GET url` answers with; null when nothing answers (refused, or no answer in time). */
export async function statusOf(url: string): Promise<number | null> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    await response.body?.cancel();
    return response.status;
  } catch {
    return null;
  }
}

export const answers = async (url: string): Promise<boolean> => (await statusOf(url)) === 200;

/** Sends an export request without spans: Errata answers 200 only to an ingest (or admin) key it knows. */
export async function checkIngestKey(baseUrl: string, key: string): Promise<void> {
  let status: number;
  try {
    const response = await fetch(`${baseUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ resourceSpans: [] }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    status = response.status;
  } catch (error) {
    throw new DemoError(`could not reach Errata at ${baseUrl}/v1/traces: ${messageOf(error)}`);
  }
  if (status === 401) throw new DemoError(`Errata at ${baseUrl} does not know ERRATA_INGEST_KEY (401)`);
  if (status === 403)
    throw new DemoError(`ERRATA_INGEST_KEY is not an ingest key (403); is it the read key?`);
  if (status !== 200) throw new DemoError(`Errata at ${baseUrl} answered ${status} to a test export`);
}

/** A read key Errata refuses would only show at the end of the run: fail before it starts instead. */
export async function checkReadKey(baseUrl: string, key: string): Promise<void> {
  const { status } = await fetchReport(baseUrl, key, 'reports/retry-waste', { groupBy: 'category' });
  if (status === 401) throw new DemoError(`Errata at ${baseUrl} does not know ERRATA_READ_KEY (401)`);
  if (status === 403) throw new DemoError(`ERRATA_READ_KEY is not a read key (403); is it the ingest key?`);
  if (status !== 200) throw new DemoError(`Errata at ${baseUrl} answered ${status} to a report request`);
}

export async function fetchReport<P extends ReportPath>(
  baseUrl: string,
  readKey: string,
  path: P,
  query: Readonly<Record<string, string>> = {},
): Promise<{ status: number; report: ErrataReports[P] | null }> {
  const response = await fetch(`${baseUrl}/api/v1/${path}?${new URLSearchParams(query).toString()}`, {
    headers: { authorization: `Bearer ${readKey}` },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return {
    status: response.status,
    report: response.ok ? ((await response.json()) as ErrataReports[P]) : null,
  };
}
