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

/** Where a test reaches one Errata over MCP and REST, with the same key. */
export interface ErrataEndpoints {
  client: Client;
  url: string;
  key: string;
}

/** A bad query: REST's 400 and the tool's INVALID_ARGUMENTS, which says what REST says (returned). */
export async function expectRefusedAlike(
  { client, url, key }: ErrataEndpoints,
  tool: string,
  args: Record<string, unknown>,
  path: string,
): Promise<string> {
  const [mcp, overRest] = await Promise.all([
    callErrataTool(client, tool, args),
    fetch(`${url}/api/v1/${path}`, { headers: { authorization: `Bearer ${key}` } }),
  ]);
  expect(overRest.status, path).toBe(400);
  const { message } = (await overRest.json()) as { message: string };
  expect(mcp.error, `${tool} ${JSON.stringify(args)}`).toEqual({
    errorCategory: 'validation',
    isRetryable: true,
    code: 'INVALID_ARGUMENTS',
    description: expect.stringContaining(message) as string,
  });
  return message;
}
