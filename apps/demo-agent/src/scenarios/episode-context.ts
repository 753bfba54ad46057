import type { Interruption } from '../demo-interrupt';
import type { DemoServers } from '../mcp/demo-servers';
import type { DemoWorkspace } from '../mcp/demo-workspace';
import type { AgentPolicy } from '../policies/agent-policy';
import type { PolicyTally } from '../report/policy-tally';

/** What every scenario of one episode under one policy needs. */
export interface EpisodeContext {
  readonly policy: AgentPolicy;
  /** 1-based. */
  readonly episode: number;
  readonly servers: DemoServers;
  readonly workspace: DemoWorkspace;
  readonly tally: PolicyTally;
  /** Checked before every scenario and every tool call. */
  readonly interruption: Interruption;
}
