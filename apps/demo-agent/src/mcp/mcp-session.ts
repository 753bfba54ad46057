/** A connected MCP client, instrumented with @errata/sdk, talking to a server process over stdio. */
import { instrumentMcpClient } from '@errata/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { DemoError, messageOf } from '../demo-error';

export interface McpSession {
  /** How the demo's output names the server. */
  readonly label: string;
  readonly client: Client;
}

export async function connectStdio(
  label: string,
  entry: string,
  args: readonly string[] = [],
  env: Record<string, string> = {},
): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [entry, ...args],
    env: { ...getDefaultEnvironment(), ...env },
    stderr: 'ignore', // the servers' banners would drown the demo's progress lines
  });
  // instrumentMcpClient works whatever the order in which the SDK and @errata/sdk were loaded.
  const client = instrumentMcpClient(new Client({ name: 'errata-demo-agent', version: '0.1.0' }));
  try {
    await client.connect(transport);
  } catch (error) {
    throw new DemoError(`could not start the ${label} MCP server (${entry}): ${messageOf(error)}`);
  }
  return { label, client };
}
