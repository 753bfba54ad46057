import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';

/** The envelope of an Errata MCP tool's result, checked against its contract: the text mirrors structuredContent, isError matches `ok`. */
export async function callErrataTool(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const structured = result.structuredContent as {
    ok: boolean;
    data: unknown;
    error: Record<string, unknown> | null;
  };
  expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(structured) }]);
  expect(result.isError === true).toBe(!structured.ok);
  return structured;
}
