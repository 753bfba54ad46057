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
  type FindingSums,
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
  /** Over all the server's tools, those `tools` leaves out too. */
  readonly calls: number;
  readonly failures: number;
  readonly violatingCalls: number;
  readonly grade: Grade;
  /** Tools the server has in the window; `tools` lists the first `toolLimit` of them (`compareToolScores`). */
  readonly toolCount: number;
  readonly tools: readonly ToolScore[];
}

export interface ServerScorecard {
  readonly rulesVersion: number;
  readonly servers: readonly ServerScore[];
}

/** Tools a server's score lists by default, and at most (`toolLimit`). */
export const DEFAULT_SCORECARD_TOOLS = 50;
export const MAX_SCORECARD_TOOLS = 500;

/**
 * The order of a server's tools, in which they are cut at `toolLimit`: most violating calls first (the tools to fix),
 * then most calls, then by name.
 */
export const compareToolScores = (a: ToolScore, b: ToolScore): number =>
  b.violatingCalls - a.violatingCalls || b.calls - a.calls || compareText(a.tool, b.tool);

/** A server's figures over all its tools in the window, whichever of them its score lists. */
export interface ServerTotals {
  readonly server: string | null;
  readonly versions: readonly string[];
  readonly calls: bigint;
  readonly failures: bigint;
  readonly violatingCalls: bigint;
  readonly toolCount: number;
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

/**
 * The scorecard from summed contributions: calls, failures and violations per server and tool, rules per tool, each
 * server's tools cut at `toolLimit`.
 */
export function scorecardFromSums(
  sums: SummedContributions,
  toolLimit: number = DEFAULT_SCORECARD_TOOLS,
): ServerScorecard {
  const servers = new Map<string, { server: string | null; versions: Set<string>; rows: CallSums[] }>();
  for (const row of sums.calls) {
    if (row.tool === null || row.sums.calls === 0n) continue;
    const key = JSON.stringify(row.server);
    const entry = servers.get(key) ?? { server: row.server, versions: new Set<string>(), rows: [] };
    if (row.serverVersion !== null) entry.versions.add(row.serverVersion);
    entry.rows.push(row);
    servers.set(key, entry);
  }
  const totals = [...servers.values()].map((entry): ServerTotals => {
    const total = sumRows(entry.rows);
    return {
      server: entry.server,
      versions: [...entry.versions],
      calls: total.calls,
      failures: total.failures,
      violatingCalls: total.violating_calls,
      toolCount: new Set(entry.rows.map((row) => row.tool)).size,
    };
  });
  return scorecardOf(totals, sums.calls, sums.findings, toolLimit);
}

/**
 * The scorecard from each server's totals (`ServerTotals`), the call sums of its tools and their findings: the
 * tools ranked (`compareToolScores`) and cut at `toolLimit`. The sums may hold only the tools to list (as the
 * repository cuts them); a server's figures and grade are its totals'.
 */
export function scorecardOf(
  totals: readonly ServerTotals[],
  calls: readonly CallSums[],
  findings: readonly FindingSums[],
  toolLimit: number,
): ServerScorecard {
  // Per server, per tool: the rows of its calls.
  const toolRows = new Map<string, Map<string, CallSums[]>>();
  for (const row of calls) {
    if (row.tool === null || row.sums.calls === 0n) continue;
    const key = JSON.stringify(row.server);
    const tools = toolRows.get(key) ?? new Map<string, CallSums[]>();
    const rows = tools.get(row.tool);
    if (rows === undefined) tools.set(row.tool, [row]);
    else rows.push(row);
    toolRows.set(key, tools);
  }
  const ruleCalls = new Map<string, bigint>();
  for (const row of findings) {
    const key = offenceKey(row.server, row.tool, row.rule);
    ruleCalls.set(key, (ruleCalls.get(key) ?? 0n) + row.sums.call_offences);
  }
  const scores = totals.map((server): ServerScore => {
    const tools = [...(toolRows.get(JSON.stringify(server.server)) ?? new Map<string, CallSums[]>())]
      .map(([tool, rows]): ToolScore => {
        const total = sumRows(rows);
        const rules = Object.fromEntries(
          FINDING_RULES.flatMap((rule) => {
            const count = Number(ruleCalls.get(offenceKey(server.server, tool, rule)) ?? 0n);
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
      })
      .sort(compareToolScores)
      .slice(0, toolLimit);
    const calls = Number(server.calls);
    const violating = Number(server.violatingCalls);
    return {
      server: server.server,
      versions: [...server.versions].sort(),
      calls,
      failures: Number(server.failures),
      violatingCalls: violating,
      grade: gradeOf(violating, calls),
      toolCount: server.toolCount,
      tools,
    };
  });
  scores.sort((a, b) => compareText(a.server, b.server));
  return { rulesVersion: RULES_VERSION, servers: scores };
}
