/**
 * Seed 003's multi-agent research system: a coordinator run with three subagent runs that search the
 * support-desk's research sources. The web source rate-limits; each subagent hands back a report:
 * - kb-researcher: everything worked → `complete`;
 * - web-researcher: one query stays rate-limited → `partial`, with the four elements (category, what it
 *   attempted, partial results, alternatives);
 * - news-researcher: its web search fails and the news source hides its failure, yet it claims `complete` — a
 *   silent partial.
 * How the subagents retry, and whether they escalate, is the policy's.
 */
import { recordSubagentReport, withAgentRun, type SubagentReport } from '@errata/sdk';
import { lastAttempt, type RunContext } from '../policies/agent-policy';
import type { EpisodeContext } from './episode-context';
import { escalate, playTasks, type PlayedStep } from './play-steps';

interface SubagentPlan {
  readonly name: string;
  /** An honest subagent reports what it could not do; the other claims success whatever happened. */
  readonly honest: boolean;
  readonly searches: readonly { readonly tool: string; readonly query: string }[];
}

const SUBAGENTS: readonly SubagentPlan[] = [
  {
    name: 'kb-researcher',
    honest: true,
    searches: [
      { tool: 'search_knowledge_base', query: 'refund window policy' },
      { tool: 'search_knowledge_base', query: 'order lookup errors' },
    ],
  },
  {
    name: 'web-researcher',
    honest: true,
    searches: [
      { tool: 'search_web', query: 'MCP isError flag' },
      { tool: 'search_web', query: 'structured error metadata' },
      { tool: 'search_web', query: 'latest MCP specification changes' }, // throttled every other time
      { tool: 'search_web', query: 'competitor refund policies' }, // always rate-limited
    ],
  },
  {
    name: 'news-researcher',
    honest: false,
    searches: [
      { tool: 'search_web', query: 'competitor press releases' },
      { tool: 'search_news', query: 'competitor press releases' },
    ],
  },
];

function describeAttempts({ step, outcome }: PlayedStep): string {
  const calls = outcome.attempts.length === 1 ? '1 call' : `${outcome.attempts.length} calls`;
  const last = lastAttempt(outcome);
  const how =
    outcome.status === 'failed'
      ? `failed each time (${last.declared.code ?? last.outcome})`
      : outcome.status === 'empty'
        ? 'no results'
        : 'answered';
  return `${step.tool} "${String(step.args['query'])}": ${calls}, ${how}`;
}

function reportOf(plan: SubagentPlan, played: readonly PlayedStep[]): SubagentReport {
  const total = played.length;
  const attempted = played.map(describeAttempts);
  const done = played.filter((entry) => entry.outcome.status !== 'failed');
  if (!plan.honest) {
    return { status: 'complete', completed: total, total, attempted, alternatives: [], partialResults: 0 };
  }
  if (done.length === total) {
    return {
      status: 'complete',
      completed: total,
      total,
      attempted,
      alternatives: [],
      partialResults: total,
    };
  }
  const failed = lastAttempt(played.find((entry) => entry.outcome.status === 'failed')!.outcome).declared;
  return {
    status: done.length === 0 ? 'failed' : 'partial',
    completed: done.length,
    total,
    errorCategory: failed.category ?? 'unknown',
    retryable: failed.retryable ?? undefined,
    attempted,
    partialResults: {
      completedQueries: done.length,
      totalQueries: total,
      sources: done.map((entry) => entry.step.args['query']),
    },
    alternatives: [
      `proceed with the ${done.length} completed queries and flag reduced coverage`,
      're-delegate the failed queries after the rate-limit window resets',
      'substitute the knowledge-base subagent for the missing topics',
    ],
  };
}

function playSubagent(plan: SubagentPlan, context: EpisodeContext): Promise<SubagentReport> {
  const { policy, servers, tally, interruption } = context;
  const run: RunContext = { inSubagent: true, tally, interruption };
  return withAgentRun({ name: plan.name, id: policy.name, role: 'subagent' }, async () => {
    const tasks = plan.searches.map(({ tool, query }) => [
      { session: servers.supportDesk, tool, args: { query } },
    ]);
    const report = reportOf(plan, await playTasks(policy, tasks, run));
    recordSubagentReport(report);
    tally.recordReport(report.status);
    return report;
  });
}

/** Plays the research run; resolves with its trace id. */
export function playResearch(context: EpisodeContext): Promise<string> {
  const { policy, episode, tally, interruption } = context;
  return withAgentRun(
    {
      name: 'research-coordinator',
      id: policy.name,
      role: 'coordinator',
      conversationId: `${policy.name}-${episode}-research`,
    },
    async (run) => {
      const reports: SubagentReport[] = [];
      for (const plan of SUBAGENTS) {
        context.interruption.check();
        reports.push(await playSubagent(plan, context));
      }
      const handOff = policy.coordinatorHandOff(reports);
      if (handOff !== null) escalate(handOff, { inSubagent: false, tally, interruption });
      return run.traceId;
    },
  );
}
