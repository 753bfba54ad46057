/**
 * `GET /servers` (DOMAIN.md §8): a scorecard per MCP server and tool — calls, failures, the error-contract rules
 * its calls violate, and a grade. Pure and order-independent.
 *
 * Grade (a decision where DOMAIN.md is silent, libs/domain/README.md): from the share of calls that violate at
 * least one rule — A none, B under 1 %, C under 5 %, D under 20 %, F from 20 %. A server's grade is computed over
 * all its calls the same way.
 */
import { FAILED_OUTCOMES } from './events';
import type { FindingCall } from './findings-report';
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
  const servers = new Map<
    string,
    { server: string | null; versions: Set<string>; tools: Map<string, FindingCall[]> }
  >();
  for (const call of calls) {
    const key = JSON.stringify(call.server);
    const entry = servers.get(key) ?? { server: call.server, versions: new Set<string>(), tools: new Map() };
    if (call.serverVersion !== null) entry.versions.add(call.serverVersion);
    entry.tools.set(call.tool, [...(entry.tools.get(call.tool) ?? []), call]);
    servers.set(key, entry);
  }
  const scores = [...servers.values()].map((entry): ServerScore => {
    const tools = [...entry.tools.entries()]
      .sort(([a], [b]) => compareText(a, b))
      .map(([tool, list]): ToolScore => {
        const rules: Partial<Record<FindingRule, number>> = {};
        let violating = 0;
        for (const call of list) {
          if (call.findings.length > 0) violating++;
          for (const rule of new Set(call.findings.map((f) => f.rule))) rules[rule] = (rules[rule] ?? 0) + 1;
        }
        const ordered = Object.fromEntries(
          FINDING_RULES.filter((r) => rules[r] !== undefined).map((r) => [r, rules[r]]),
        );
        return {
          tool,
          calls: list.length,
          failures: list.filter((call) => FAILED_OUTCOMES.includes(call.outcome)).length,
          violatingCalls: violating,
          rules: ordered,
          grade: gradeOf(violating, list.length),
        };
      });
    const total = tools.reduce((sum, t) => sum + t.calls, 0);
    const violating = tools.reduce((sum, t) => sum + t.violatingCalls, 0);
    return {
      server: entry.server,
      versions: [...entry.versions].sort(),
      calls: total,
      failures: tools.reduce((sum, t) => sum + t.failures, 0),
      violatingCalls: violating,
      grade: gradeOf(violating, total),
      tools,
    };
  });
  scores.sort((a, b) => compareText(a.server, b.server));
  return { rulesVersion: RULES_VERSION, servers: scores };
}
