/**
 * `GET /servers` (DOMAIN.md §8): a scorecard per MCP server and tool — calls, failures, the error-contract rules
 * its calls violate, and a grade. Pure and order-independent.
 *
 * Grade (a decision where DOMAIN.md is silent, libs/domain/README.md): from the share of calls that violate at
 * least one rule — A none, B under 1 %, C under 5 %, D under 20 %, F from 20 %. A server's grade is computed over
 * all its calls the same way.
 */
import type { FindingCall } from './findings-report';
import {
  contributionsInMemory,
  offenceKey,
  sumContributions,
  sumRows,
  traceFactsOfCalls,
  type CallMeasure,
  type CallSums,
  type SummedContributions,
} from './report-contributions';
import { RULES_VERSION, FINDING_RULES, type FindingRule } from './rules';
import { compareText } from './report-order';

export type Grade = 'A' | 'B' | 'C' | 'D' | 'F';

export interface ToolScore {
  readonly tool: string;
  readonly calls: number;
  readonly failures: number;
  /** Calls violating at least one rule. */
  readonly violatingCalls: number;
  /** Calls violating each rule (rules with none left out). */
  readonly rules: Readonly<Partial<Record<FindingRule, number>>>;
  readonly grade: Grade;
}

export interface ServerScore {
  readonly server: string | null;
  readonly versions: readonly string[];
  readonly calls: number;
  readonly failures: number;
  readonly violatingCalls: number;
  readonly grade: Grade;
  readonly tools: readonly ToolScore[];
}

export interface ServerScorecard {
  readonly rulesVersion: number;
  readonly servers: readonly ServerScore[];
}

export function gradeOf(violatingCalls: number, calls: number): Grade {
  if (violatingCalls === 0 || calls === 0) return 'A';
  const share = violatingCalls / calls;
  return share < 0.01 ? 'B' : share < 0.05 ? 'C' : share < 0.2 ? 'D' : 'F';
}

export function serverScorecard(calls: readonly FindingCall[]): ServerScorecard {
  return scorecardFromSums(sumContributions(contributionsInMemory(traceFactsOfCalls(calls))));
}

/** The call measures `scorecardFromSums` reads. */
export const SCORECARD_MEASURES: readonly CallMeasure[] = ['calls', 'failures', 'violating_calls'];

/** The scorecard from summed contributions: calls, failures and violations per tool, rules per tool. */
export function scorecardFromSums(sums: SummedContributions): ServerScorecard {
  const servers = new Map<
    string,
    { server: string | null; versions: Set<string>; tools: Map<string, CallSums[]> }
  >();
  for (const row of sums.calls) {
    if (row.tool === null || row.sums.calls === 0n) continue;
    const key = JSON.stringify(row.server);
    const entry = servers.get(key) ?? { server: row.server, versions: new Set<string>(), tools: new Map() };
    if (row.serverVersion !== null) entry.versions.add(row.serverVersion);
    entry.tools.set(row.tool, [...(entry.tools.get(row.tool) ?? []), row]);
    servers.set(key, entry);
  }
  const ruleCalls = new Map<string, bigint>();
  for (const row of sums.findings) {
    const key = offenceKey(row.server, row.tool, row.rule);
    ruleCalls.set(key, (ruleCalls.get(key) ?? 0n) + row.sums.call_offences);
  }
  const scores = [...servers.values()].map((entry): ServerScore => {
    const tools = [...entry.tools.entries()]
      .sort(([a], [b]) => compareText(a, b))
      .map(([tool, rows]): ToolScore => {
        const total = sumRows(rows);
        const rules = Object.fromEntries(
          FINDING_RULES.flatMap((rule) => {
            const count = Number(ruleCalls.get(offenceKey(entry.server, tool, rule)) ?? 0n);
            return count > 0 ? [[rule, count]] : [];
          }),
        );
        const calls = Number(total.calls);
        const violating = Number(total.violating_calls);
        return {
          tool,
          calls,
          failures: Number(total.failures),
          violatingCalls: violating,
          rules,
          grade: gradeOf(violating, calls),
        };
      });
    const calls = tools.reduce((sum, t) => sum + t.calls, 0);
    const violating = tools.reduce((sum, t) => sum + t.violatingCalls, 0);
    return {
      server: entry.server,
      versions: [...entry.versions].sort(),
      calls,
      failures: tools.reduce((sum, t) => sum + t.failures, 0),
      violatingCalls: violating,
      grade: gradeOf(violating, calls),
      tools,
    };
  });
  scores.sort((a, b) => compareText(a.server, b.server));
  return { rulesVersion: RULES_VERSION, servers: scores };
}
