/**
 * The real MCP servers from npm (`@modelcontextprotocol/server-everything`, `server-filesystem`, `server-memory`),
 * started as their own processes: over stdio, or server-everything's Streamable HTTP mode.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { freePort } from './server-process';

export const NPM_SERVER_ENTRIES = {
  everything: require.resolve('@modelcontextprotocol/server-everything/dist/index.js'),
  filesystem: require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js'),
  memory: require.resolve('@modelcontextprotocol/server-memory/dist/index.js'),
} as const;

export interface StdioServer {
  readonly client: Client;
  readonly transport: StdioClientTransport;
  close(): Promise<void>;
}

/** A client connected over stdio to a server process started with `node <entry> ...args`; `beforeConnect` sees it first. */
export async function connectStdio(
  server: keyof typeof NPM_SERVER_ENTRIES,
  args: string[] = [],
  env: Record<string, string> = {},
  beforeConnect: (client: Client) => void = () => undefined,
): Promise<StdioServer> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [NPM_SERVER_ENTRIES[server], ...args],
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'errata-sdk-test', version: '1.0.0' });
  beforeConnect(client);
  await client.connect(transport);
  return { client, transport, close: () => client.close() };
}

/** server-everything in Streamable HTTP mode on a free port; resolves once it listens. */
export async function startEverythingHttp(): Promise<{ url: URL; child: ChildProcess; stop(): void }> {
  const port = await freePort();
  const child = spawn(process.execPath, [NPM_SERVER_ENTRIES.everything, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not listen:\n${output}`)), 20_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening on port')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}:\n${output}`)));
  });
  return { url: new URL(`http://127.0.0.1:${port}/mcp`), child, stop: () => child.kill('SIGTERM') };
}
