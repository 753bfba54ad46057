/**
 * A fixture MCP server (the SDK's low-level `Server`, so that it can also answer with JSON-RPC errors) whose
 * tools return every example payload of the seeds, plus two probes: `echo_meta` returns the request's `_meta`
 * and `invalid_date` fails with a JSON-RPC -32602 error, as the seeds' bad example does.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { recordEscalation, recordSubagentReport, withAgentRun } from '@errata/sdk';
import { SEED_EXAMPLES } from '../../libs/domain/src/seed-examples.spec-helper';

const exampleTools = [...new Set(SEED_EXAMPLES.map((example) => example.tool))];

export function seedServer(version = '1.4.0'): Server {
  const server = new Server({ name: 'seed-fixtures', version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...exampleTools, 'echo_meta', 'invalid_date'].map((name) => ({
      name,
      inputSchema: { type: 'object' as const, properties: { example: { type: 'integer' } } },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const { name, arguments: args, _meta } = request.params;
    if (name === 'echo_meta') {
      const meta = { ..._meta };
      return { content: [{ type: 'text', text: JSON.stringify(meta) }], structuredContent: { meta } };
    }
    if (name === 'invalid_date') throw new McpError(ErrorCode.InvalidParams, 'Invalid date');
    const example = SEED_EXAMPLES[Number(args?.['example'])];
    if (example === undefined || example.tool !== name)
      throw new McpError(ErrorCode.InvalidParams, 'no such example');
    return structuredClone(example.result) as never;
  });
  return server;
}

/** The tools/call params that make the fixture server return the seed example whose name starts with `name`. */
export function seedCall(name: string): { name: string; arguments: { example: number } } {
  const index = SEED_EXAMPLES.findIndex((e) => e.name.startsWith(name));
  if (index < 0) throw new Error(`no seed example ${name}`);
  return { name: SEED_EXAMPLES[index]!.tool, arguments: { example: index } };
}

/** A connected client of a fresh fixture server over the SDK's in-memory transport. */
export async function connectSeedServer(): Promise<{ client: Client; close(): Promise<void> }> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const server = seedServer();
  await server.connect(serverTransport);
  const client = new Client({ name: 'seed-test', version: '1.0.0' });
  await client.connect(clientTransport);
  return {
    client,
    async close() {
      await client.close();
      await server.close();
    },
  };
}

/**
 * test/agent-reports.e2e.spec.ts's scenario, whose reports it works out by hand: a coordinator run "support" with
 * escalations, an empty-as-error and a failure-as-empty, and subagent runs "web-research" and "news";
 * `afterSubagents` runs last in the coordinator's run.
 */
export async function playSupportScenario(
  client: Client,
  options: { readonly coordinatorId?: string; readonly afterSubagents?: () => Promise<void> } = {},
): Promise<void> {
  await withAgentRun({ name: 'support', id: options.coordinatorId, role: 'coordinator' }, async () => {
    await client.callTool(seedCall('business with retriable'));
    recordEscalation({ target: 'human', reason: 'refund outside the window' });
    await client.callTool(seedCall('lookup_order transient'));
    recordEscalation({ target: 'human', reason: 'order service down' });
    for (let i = 0; i < 3; i++) await client.callTool(seedCall('searchSupportTickets NO_TICKETS_FOUND'));
    await client.callTool(seedCall('hidden failure: isError false with "ERROR'));
    await withAgentRun({ name: 'web-research' }, async () => {
      await client.callTool(seedCall('rate limited'));
      recordSubagentReport({
        status: 'partial',
        completed: 6,
        total: 8,
        errorCategory: 'transient',
        attempted: ['3 retries with backoff'],
        partialResults: { completedQueries: 6 },
        alternatives: ['proceed with 6 of 8 sources'],
      });
    });
    await withAgentRun({ name: 'news' }, async () => {
      await client.callTool(seedCall('lookup_order transient'));
      recordSubagentReport({ status: 'complete', completed: 3, total: 3 });
    });
    await options.afterSubagents?.();
  });
}
