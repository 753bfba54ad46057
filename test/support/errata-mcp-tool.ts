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
  const refused = `${tool} ${JSON.stringify(args)}`;
  expect(mcp.error, refused).toEqual({
    errorCategory: 'validation',
    isRetryable: true,
    code: 'INVALID_ARGUMENTS',
    description: expect.any(String) as string,
  });
  // REST's refusal and no other (of two bad arguments, the one REST refuses wins); the SDK says where, when it refuses.
  const reason = String(mcp.error!.description)
    .replace(/^Input validation error: Invalid arguments for tool \S+: /, '')
    .replace(/ at \S+(?=\. Correct the argument and retry\.$)/, '');
  expect(reason, refused).toBe(`${message}. Correct the argument and retry.`);
  return message;
}
