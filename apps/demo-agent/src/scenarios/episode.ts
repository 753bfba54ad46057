/** One episode under one policy: every support conversation, the research run, and the workspace run. */
import { difference, type TallyCounts } from '../report/policy-tally';
import type { EpisodeContext } from './episode-context';
import { playResearch } from './research.scenario';
import { playSupportScenario, SUPPORT_SCENARIOS } from './support.scenarios';
import { playWorkspace } from './workspace.scenario';

export interface PlayedRun {
  readonly scenario: string;
  /** What this agent run did (subagent runs included). */
  readonly counts: TallyCounts;
  /** The run's trace, when the scenario says (the research run's, to show as a timeline). */
  readonly traceId: string | null;
}

export async function playEpisode(context: EpisodeContext, onRun: (run: PlayedRun) => void): Promise<void> {
  /** `play` resolves with the trace to show as a timeline, or with null. */
  const measured = async (scenario: string, play: () => Promise<string | null>) => {
    context.interruption.check();
    const before = context.tally.counts();
    const traceId = await play();
    onRun({ scenario, counts: difference(context.tally.counts(), before), traceId });
  };
  const untracked = (played: Promise<unknown>) => played.then(() => null);
  for (const scenario of SUPPORT_SCENARIOS) {
    await measured(scenario.id, () => untracked(playSupportScenario(scenario, context)));
  }
  await measured('research-with-subagents', () => playResearch(context));
  await measured('npm-reference-servers', () => untracked(playWorkspace(context)));
}
