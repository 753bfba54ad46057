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
