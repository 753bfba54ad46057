// Report latency: every report endpoint over the last 24 hours and 30 days, next to a straightforward SQL query
// over the raw event log for the same window, in the same run.
import { performance } from 'node:perf_hooks';
import { withClient } from '../ingest/postgres.mjs';
import { getReport } from './http.mjs';
import { BASELINE_RUNS, REQUESTS, WARMUP } from './settings.mjs';

const WINDOWED = `project_id = $1 AND start_time >= $2 AND start_time < $3`;

/** Each endpoint, and the raw-log query a plain implementation would start from. */
export const ENDPOINTS = [
  {
    path: 'reports/retry-waste?groupBy=category',
    baseline: `SELECT server_name, tool_name, outcome, count(*), sum(extract(epoch FROM end_time - start_time))
                 FROM event WHERE ${WINDOWED} AND type = 'ToolCallObserved' GROUP BY 1, 2, 3`,
  },
  {
    path: 'reports/escalations',
    baseline: `SELECT type, outcome, count(*) FROM event
                WHERE ${WINDOWED} AND (type = 'EscalationObserved'
                   OR (type = 'ToolCallObserved' AND outcome NOT IN ('ok', 'ok_empty'))) GROUP BY 1, 2`,
  },
  {
    path: 'reports/misclassified-results',
    baseline: `SELECT server_name, tool_name, count(*),
                      count(*) FILTER (WHERE data->'result'->>'isError' = 'true'
                                         AND data->'result'->>'text' ILIKE '%no result%'),
                      count(*) FILTER (WHERE data->'result'->>'isError' = 'false'
                                         AND data->'result'->>'text' ILIKE '%error%')
                 FROM event WHERE ${WINDOWED} AND type = 'ToolCallObserved' GROUP BY 1, 2`,
  },
  {
    path: 'reports/subagent-coverage',
    baseline: `SELECT data->>'status', count(*),
                      avg((data->>'completed')::float8 / nullif((data->>'total')::float8, 0))
                 FROM event WHERE ${WINDOWED} AND type = 'SubagentReportObserved' GROUP BY 1`,
  },
  {
    path: 'findings',
    baseline: `SELECT server_name, tool_name, count(*)
                 FROM event WHERE ${WINDOWED} AND type = 'ToolCallObserved' AND outcome = 'tool_error'
                  AND data->'declared'->>'category' IS NULL GROUP BY 1, 2`,
  },
  {
    path: 'servers',
    baseline: `SELECT server_name, tool_name, count(*), count(*) FILTER (WHERE outcome NOT IN ('ok', 'ok_empty'))
                 FROM event WHERE ${WINDOWED} AND type = 'ToolCallObserved' GROUP BY 1, 2`,
  },
  {
    // The dashboard's filter bar asks for it on every page: the servers, tools and agents to choose from.
    path: 'names',
    baseline: `SELECT DISTINCT server_name, tool_name FROM event WHERE ${WINDOWED} AND type = 'ToolCallObserved'
               UNION ALL
               SELECT DISTINCT data->>'agentName', NULL FROM event WHERE ${WINDOWED} AND type = 'AgentRunObserved'`,
  },
  {
    path: 'reports/timeseries',
    baseline: `SELECT date_trunc('hour', start_time), server_name, tool_name, outcome, count(*)
                 FROM event WHERE ${WINDOWED} AND type = 'ToolCallObserved' GROUP BY 1, 2, 3, 4`,
  },
];

export const WINDOWS = [
  { name: '24h', ms: 86_400_000 },
  { name: '30d', ms: 30 * 86_400_000 },
];

const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
export const summary = (times) => {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted.at(-1), n: sorted.length };
};

/** p50 / p95 of every endpoint and its baseline over both windows ending now (not aligned to any hour). */
export async function measureLatency(port, database, projectId) {
  const results = [];
  for (const window of WINDOWS) {
    for (const endpoint of ENDPOINTS) {
      const to = new Date();
      const from = new Date(to.getTime() - window.ms);
      const sep = endpoint.path.includes('?') ? '&' : '?';
      const path = `/api/v1/${endpoint.path}${sep}from=${from.toISOString()}&to=${to.toISOString()}`;
      const times = [];
      let bytes = 0;
      for (let i = 0; i < WARMUP + REQUESTS; i++) {
        const began = performance.now();
        const body = await getReport(port, path);
        if (i >= WARMUP) times.push(performance.now() - began);
        bytes = body.length;
      }
      const baseline = await withClient(database, async (client) => {
        const runs = [];
        for (let i = 0; i < BASELINE_RUNS; i++) {
          const began = performance.now();
          await client.query(endpoint.baseline, [projectId, from, to]);
          runs.push(performance.now() - began);
        }
        return runs;
      });
      const row = {
        window: window.name,
        endpoint: endpoint.path,
        report: summary(times),
        baseline: summary(baseline),
        bytes,
      };
      results.push(row);
      console.log(
        `  ${window.name} ${endpoint.path.padEnd(38)} p50 ${row.report.p50.toFixed(1).padStart(7)} ms  p95 ${row.report.p95
          .toFixed(1)
          .padStart(
            7,
          )} ms   raw-SQL p50 ${row.baseline.p50.toFixed(0).padStart(6)} ms  p95 ${row.baseline.p95.toFixed(0).padStart(6)} ms`,
      );
    }
  }
  return results;
}
