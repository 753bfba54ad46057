/**
 * The four MCP servers the demo agent talks to, each its own process over stdio: the bundled support-desk
 * server and the reference servers from npm.
 */
import { join } from 'node:path';
import type { DemoWorkspace } from './demo-workspace';
import { connectStdio, type McpSession } from './mcp-session';

export interface DemoServers {
  readonly supportDesk: McpSession;
  readonly everything: McpSession;
  readonly filesystem: McpSession;
  readonly memory: McpSession;
}

const SUPPORT_DESK_ENTRY = join(__dirname, '..', 'support-desk', 'main.js');

export async function connectDemoServers(workspace: DemoWorkspace): Promise<DemoServers> {
  const connecting = [
    connectStdio('support-desk', SUPPORT_DESK_ENTRY),
    // server-everything's first argument picks the transport.
    connectStdio(
      'server-everything',
      require.resolve('@modelcontextprotocol/server-everything/dist/index.js'),
      ['stdio'],
    ),
    // server-filesystem takes its allowed directories as arguments.
    connectStdio(
      'server-filesystem',
      require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js'),
      [workspace.files],
    ),
    connectStdio('server-memory', require.resolve('@modelcontextprotocol/server-memory/dist/index.js'), [], {
      MEMORY_FILE_PATH: workspace.memoryFile,
    }),
  ];
  const settled = await Promise.allSettled(connecting);
  const sessions = settled.flatMap((entry) => (entry.status === 'fulfilled' ? [entry.value] : []));
  const failure = settled.find((entry) => entry.status === 'rejected');
  if (failure !== undefined) {
    await closeSessions(sessions);
    throw failure.reason;
  }
  const [supportDesk, everything, filesystem, memory] = sessions as [
    McpSession,
    McpSession,
    McpSession,
    McpSession,
  ];
  return { supportDesk, everything, filesystem, memory };
}

export async function closeSessions(sessions: readonly McpSession[]): Promise<void> {
  await Promise.allSettled(sessions.map((session) => session.client.close()));
}

export const allSessions = (servers: DemoServers): McpSession[] => [
  servers.supportDesk,
  servers.everything,
  servers.filesystem,
  servers.memory,
];
