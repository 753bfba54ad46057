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
}

export async function playEpisode(context: EpisodeContext, onRun: (run: PlayedRun) => void): Promise<void> {
  const measured = async (scenario: string, play: () => Promise<unknown>) => {
    const before = context.tally.counts();
    await play();
    onRun({ scenario, counts: difference(context.tally.counts(), before) });
  };
  for (const scenario of SUPPORT_SCENARIOS) {
    await measured(scenario.id, () => playSupportScenario(scenario, context));
  }
  await measured('research-with-subagents', () => playResearch(context));
  await measured('npm-reference-servers', () => playWorkspace(context));
}
