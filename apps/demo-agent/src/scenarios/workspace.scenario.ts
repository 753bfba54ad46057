/**
 * The npm reference servers, as a workspace agent uses them. None of them declares an error category, so even
 * the contract-aware policy can only guess; Errata infers the categories from the texts.
 */
import { join } from 'node:path';
import { withAgentRun } from '@errata/sdk';
import type { ToolStep } from '../policies/agent-policy';
import type { EpisodeContext } from './episode-context';
import { playTasks } from './play-steps';

function workspaceTasks({ servers, workspace, policy, episode }: EpisodeContext): ToolStep[][] {
  const { everything, filesystem, memory } = servers;
  const notes = join(workspace.files, 'notes');
  const tasks: ToolStep[] = [
    { session: everything, tool: 'echo', args: { message: `hello from the ${policy.name} agent` } },
    { session: everything, tool: 'get-sum', args: { a: 19, b: 23 } },
    // A string where the schema wants a number: "Input validation error".
    { session: everything, tool: 'get-sum', args: { a: '19', b: 23 } },
    { session: filesystem, tool: 'read_text_file', args: { path: join(notes, 'welcome.md') } },
    { session: filesystem, tool: 'list_directory', args: { path: notes } },
    { session: filesystem, tool: 'read_text_file', args: { path: join(notes, 'todo.md') } },
    // "Access denied - path outside allowed directories". The run reads no more files after it: Errata counts a
    // later call of the same tool in the run as a retry of this failure, whatever its arguments.
    { session: filesystem, tool: 'read_text_file', args: { path: workspace.outsideFile } },
    { session: filesystem, tool: 'get_file_info', args: { path: join(notes, 'missing.md') } }, // ENOENT
    {
      session: memory,
      tool: 'create_entities',
      args: {
        entities: [
          {
            name: `case-${policy.name}-${episode}`,
            entityType: 'support-case',
            observations: ['refund requested for order #10482'],
          },
        ],
      },
    },
    { session: memory, tool: 'search_nodes', args: { query: 'support-case' } },
    { session: memory, tool: 'search_nodes', args: { query: 'warranty claim' } }, // no match: a valid empty result
  ];
  return tasks.map((step) => [step]);
}

export function playWorkspace(context: EpisodeContext): Promise<unknown> {
  const { policy, episode, tally, interruption } = context;
  return withAgentRun(
    { name: 'workspace-agent', id: policy.name, conversationId: `${policy.name}-${episode}-workspace` },
    () => playTasks(policy, workspaceTasks(context), { inSubagent: false, tally, interruption }),
  );
}
