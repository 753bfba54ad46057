/**
 * Names longer than Errata keeps (MAX_NAME_BYTES): stored cut, and still selected by the report filters when given
 * whole, over REST and over MCP.
 */
import { MAX_NAME_BYTES } from '@errata/domain';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { AgentTrace } from './support/agent-spans';
import {
  connectErrataMcp,
  defaultProjectId,
  sendSpans,
  startTestServer,
  type TestServer,
} from './support/server';

const t0 = Date.UTC(2026, 10, 30, 8, 0, 0);
const longTool = `lookup_${'order_history_'.repeat(25)}`;
const longServer = `acme-${'records-'.repeat(40)}`;
const longAgent = `triage-${'assistant-'.repeat(30)}`;

describe('report filters with names longer than Errata keeps', () => {
  let server: TestServer;
  let mcp: Client;
  beforeAll(async () => {
    server = await startTestServer('postgres');
    const agentTrace = new AgentTrace();
    agentTrace.run(longAgent, t0, [
      {
        tool: longTool,
        server: longServer,
        startMs: t0,
        durationMs: 20,
        isError: true,
        category: 'business',
      },
      {
        tool: longTool,
        server: longServer,
        startMs: t0 + 100,
        durationMs: 20,
        isError: true,
        category: 'business',
      },
      { tool: 'short', startMs: t0 + 200, durationMs: 10 },
    ]);
    expect(await sendSpans(server.url, server.ingestKey, agentTrace.spans())).toBe(200);
    await server.catchUp();
    mcp = await connectErrataMcp(server.url, server.readKey);
  }, 120_000);
  afterAll(async () => {
    await mcp?.close();
    await server?.close();
  });

  const restCalls = async (query: string) => {
    const response = await fetch(`${server.url}/api/v1/reports/retry-waste?${query}`, {
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { totals: { calls: number } }).totals.calls;
  };

  it('given the whole names (longer than stored), then the filters select their calls, as the stored names do', async () => {
    expect(Buffer.byteLength(longTool)).toBeGreaterThan(MAX_NAME_BYTES);
    const stored = (await (
      await fetch(`${server.url}/api/v1/reports/retry-waste?groupBy=tool`, {
        headers: { authorization: `Bearer ${server.readKey}` },
      })
    ).json()) as { groups: { server: string; tool: string }[] };
    const [group] = stored.groups;
    expect(group!.tool).not.toBe(longTool);
    expect(longTool.startsWith(group!.tool.slice(0, 100))).toBe(true);

    const whole = `tool=${encodeURIComponent(longTool)}&server=${encodeURIComponent(longServer)}&agent=${encodeURIComponent(longAgent)}`;
    expect(await restCalls(whole)).toBe(2);
    expect(
      await restCalls(`tool=${encodeURIComponent(group!.tool)}&server=${encodeURIComponent(group!.server)}`),
    ).toBe(2);
    expect(await restCalls(`tool=${encodeURIComponent(`${longTool}x`)}`)).toBe(0);

    const answer = (await mcp.callTool({
      name: 'get_retry_waste',
      arguments: { tool: longTool, server: longServer, agent: longAgent },
    })) as { structuredContent: { ok: boolean; data: { totals: { calls: number } } } };
    expect(answer.structuredContent.ok).toBe(true);
    expect(answer.structuredContent.data.totals.calls).toBe(2);
  });

  it('given an owner registered for the whole server name, then it owns the server the reports name', async () => {
    const { key } = await server.app
      .get(ApiKeyService)
      .create(await defaultProjectId(server.db), 'admin', 'cli');
    const response = await fetch(`${server.url}/api/v1/owners`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ server: longServer, webhookUrl: 'https://hooks.example.com/errata' }),
    });
    expect(response.status).toBe(201);
    const owner = (await response.json()) as { serverName: string };
    const byServer = (await (
      await fetch(`${server.url}/api/v1/reports/retry-waste?groupBy=server`, {
        headers: { authorization: `Bearer ${server.readKey}` },
      })
    ).json()) as { groups: { server: string | null }[] };
    expect(byServer.groups.map((group) => group.server)).toContain(owner.serverName);
  });
});
