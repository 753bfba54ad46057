/**
 * PostgreSQL text cannot hold U+0000: a NUL in a parameter that reaches a query would fail the query. Every way in
 * (report filters over REST and over MCP, the owner body) refuses it as bad input instead, saying which parameter.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectRepository } from '../apps/server/src/repositories/project.repository';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { connectErrataMcp, startTestServer, type TestServer } from './support/server';

let server: TestServer;
let admin: string;

beforeAll(async () => {
  server = await startTestServer('postgres', { ERRATA_WEBHOOK_ALLOW_INTERNAL: 'true' });
  const project = await server.app.get(ProjectRepository).ensureProject('default');
  admin = (await server.app.get(ApiKeyService).create(project.id, 'admin', 'cli')).key;
}, 60_000);
afterAll(() => server?.close());

async function get(path: string) {
  const response = await fetch(`${server.url}/api/v1/${path}`, {
    headers: { authorization: `Bearer ${server.readKey}` },
  });
  return { status: response.status, body: (await response.json()) as { message?: string } };
}

describe('a NUL character in a text parameter', () => {
  it.each([
    ['reports/retry-waste?server=%00', 'server'],
    ['reports/retry-waste?groupBy=tool&tool=a%00b', 'tool'],
    ['reports/escalations?agent=%00', 'agent'],
    ['reports/misclassified-results?server=a%00', 'server'],
    ['reports/subagent-coverage?agent=x%00', 'agent'],
    ['reports/timeseries?from=2026-11-29T00:00:00Z&server=%00', 'server'],
    ['findings?tool=%00', 'tool'],
    ['findings/0123456789abcdef0123?server=%00', 'server'],
    ['servers?server=a%00b', 'server'],
  ])('GET /api/v1/%s answers 400 naming "%s"', async (path, name) => {
    const { status, body } = await get(path);
    expect(status).toBe(400);
    expect(body.message).toContain(`"${name}" must not contain a NUL character`);
  });

  it('in an id or an enumerated parameter answers 400 (their format is checked before any query)', async () => {
    for (const path of ['traces/%00', 'fixes/%00', 'findings?rule=%00', 'deliveries?status=%00']) {
      const response = await fetch(`${server.url}/api/v1/${path}`, {
        headers: { authorization: `Bearer ${admin}` },
      });
      expect(response.status, path).toBe(400);
    }
    const redelivered = await fetch(`${server.url}/api/v1/deliveries/%00/redeliver`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(redelivered.status).toBe(400);
  });

  it('is INVALID_ARGUMENTS on the MCP endpoint', async () => {
    const mcp = await connectErrataMcp(server.url, server.readKey);
    try {
      for (const [tool, args] of [
        ['get_retry_waste', { server: 'a\u0000b' }],
        ['list_findings', { tool: '\u0000' }],
        ['get_escalation_rates', { agent: '\u0000' }],
      ] as const) {
        const result = (await mcp.callTool({ name: tool, arguments: args })) as CallToolResult;
        expect(result.isError, tool).toBe(true);
        expect(result.structuredContent, tool).toMatchObject({
          ok: false,
          error: { errorCategory: 'validation', code: 'INVALID_ARGUMENTS' },
        });
      }
    } finally {
      await mcp.close();
    }
  });

  it.each(['server', 'contact'])('in the owner field "%s" answers 400', async (field) => {
    const owner: Record<string, string> = {
      server: 'nul-test-server',
      webhookUrl: 'http://127.0.0.1:47499/hook',
      contact: 'ops@example.com',
    };
    owner[field] = `a\u0000${owner[field]}`;
    const response = await fetch(`${server.url}/api/v1/owners`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify(owner),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toContain(
      `"${field}" must not contain a NUL character`,
    );
  });
});
