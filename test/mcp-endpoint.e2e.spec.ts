/**
 * Errata as an MCP server (`/mcp`, Streamable HTTP), driven by the official MCP SDK client: its tools answer with
 * the same reports as REST, in the error contract Errata recommends — one `{ ok, data, error }` envelope that the
 * output schema admits, mirrored in a text block, `errorCategory` and `isRetryable` on every failure, and empty
 * results that are not errors.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectRepository } from '../apps/server/src/repositories/project.repository';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { callErrataTool, expectRefusedAlike } from './support/errata-mcp-tool';
import { generatedCorpus } from './support/generated-corpus';
import {
  connectErrataMcp,
  defaultProjectId,
  sendSpans,
  startTestServer,
  type TestServer,
} from './support/server';

let server: TestServer;
let client: Client;

async function connect(key: string): Promise<Client> {
  return connectErrataMcp(server.url, key);
}

beforeAll(async () => {
  server = await startTestServer('postgres');
  const corpus = generatedCorpus({ traces: 20, seed: 11 });
  expect(await sendSpans(server.url, server.ingestKey, corpus)).toBe(200);
  await server.catchUp();
  client = await connect(server.readKey);
}, 60_000);
afterAll(async () => {
  await client?.close();
  await server?.close();
});

async function rest(path: string): Promise<unknown> {
  const response = await fetch(`${server.url}/api/v1/${path}`, {
    headers: { authorization: `Bearer ${server.readKey}` },
  });
  return response.json();
}

const call = (name: string, args: Record<string, unknown> = {}, on = client) =>
  callErrataTool(on, name, args);

describe('the Errata MCP endpoint', () => {
  it('lists its tools, each with an output schema that admits the error shape', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'acknowledge_fix',
      'get_escalation_rates',
      'get_fix_suggestion',
      'get_retry_waste',
      'get_subagent_coverage',
      'get_trace_timeline',
      'list_findings',
      'list_misclassified_results',
      'list_servers',
    ]);
    for (const tool of tools) {
      expect(tool.outputSchema?.properties).toMatchObject({ ok: {}, data: {}, error: {} });
      expect(tool.annotations?.readOnlyHint).toBe(tool.name !== 'acknowledge_fix');
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    // An acknowledgement is recorded, nothing deleted: MCP takes a tool without the hint as destructive.
    expect(byName.get('acknowledge_fix')?.annotations?.destructiveHint).toBe(false);
    // The bounds the endpoint enforces are those its schema advertises.
    expect(byName.get('list_findings')?.inputSchema.properties).toMatchObject({
      limit: { type: 'integer', minimum: 1, maximum: 500 },
      offset: { type: 'integer', minimum: 0 },
      rule: { type: 'string', enum: expect.arrayContaining(['untyped-error', 'empty-as-error']) as string[] },
    });
    expect(byName.get('get_retry_waste')?.inputSchema.properties?.['groupBy']).toMatchObject({
      type: 'string',
      enum: ['category', 'server', 'tool'],
    });
    // A finding id's pattern is in the schema, and every argument says what it is.
    for (const name of ['get_fix_suggestion', 'acknowledge_fix'])
      expect(byName.get(name)?.inputSchema.properties?.['findingId'], name).toMatchObject({
        type: 'string',
        pattern: '^[0-9a-f]{20}$',
      });
    for (const tool of tools)
      for (const [argument, schema] of Object.entries(tool.inputSchema.properties ?? {}))
        expect((schema as { description?: string }).description, `${tool.name}.${argument}`).toEqual(
          expect.any(String),
        );
  });

  it('does not promise tools/list_changed notifications, which a stateless endpoint never sends', () => {
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: false });
  });

  it('answers with the same reports as the REST API', async () => {
    const pairs: [string, Record<string, unknown>, string][] = [
      ['get_retry_waste', { groupBy: 'tool' }, 'reports/retry-waste?groupBy=tool'],
      ['get_escalation_rates', {}, 'reports/escalations'],
      ['list_misclassified_results', { agent: 'support' }, 'reports/misclassified-results?agent=support'],
      ['get_subagent_coverage', {}, 'reports/subagent-coverage'],
      ['list_findings', { limit: 2 }, 'findings?limit=2'],
    ];
    for (const [tool, args, path] of pairs) {
      const answer = await call(tool, args);
      expect(answer, tool).toEqual({ ok: true, data: await rest(path), error: null });
    }
  });

  it('suggests the fix for a finding: the result to return, the handler and the Markdown', async () => {
    const listed = await call('list_findings');
    const [first] = (listed.data as { findings: { id: string; rule: string }[] }).findings;
    const answer = await call('get_fix_suggestion', { findingId: first!.id });
    expect(answer.ok).toBe(true);
    expect(answer.data).toMatchObject({
      finding: { id: first!.id, rule: first!.rule, samples: expect.any(Array) as unknown[] },
      suggestedContract: { findingId: first!.id, markdown: expect.stringContaining(first!.id) as string },
    });
  });

  it('answers bad arguments and unknown ids with validation errors that say how to recover', async () => {
    expect(await call('get_retry_waste', { from: 'yesterday' })).toEqual({
      ok: false,
      data: null,
      error: {
        errorCategory: 'validation',
        isRetryable: true,
        code: 'INVALID_ARGUMENTS',
        description: expect.stringContaining('"from" must be an ISO-8601 date or date-time') as string,
      },
    });
    expect((await call('get_fix_suggestion', { findingId: 'ffffffffffffffffffff' })).error).toMatchObject({
      errorCategory: 'validation',
      isRetryable: true,
      code: 'FINDING_NOT_FOUND',
    });
    expect((await call('list_findings', { limit: 0 })).error).toMatchObject({ code: 'INVALID_ARGUMENTS' });
  });

  it('tells a finding outside the window from one never seen, and a fix never suggested from either', async () => {
    const listed = await call('list_findings');
    const [first] = (listed.data as { findings: { id: string; firstSeen: string }[] }).findings;
    const beforeIt = { to: new Date(Date.parse(first!.firstSeen) - 1).toISOString() };
    const outside = await call('get_fix_suggestion', { findingId: first!.id, ...beforeIt });
    expect(outside.error).toMatchObject({ code: 'FINDING_NOT_FOUND', isRetryable: true });
    expect(outside.error?.['description']).toMatch(/window and filters given.*with a window that holds/s);
    // No owner is registered for any server here, so Errata has suggested no fix: an admin must register one first.
    const { key } = await server.app
      .get(ApiKeyService)
      .create(await defaultProjectId(server.db), 'admin', 'cli');
    const admin = await connect(key);
    const acknowledged = await call('acknowledge_fix', { findingId: first!.id }, admin);
    expect(acknowledged.error).toMatchObject({
      errorCategory: 'business',
      isRetryable: false,
      code: 'FIX_NOT_FOUND',
      description: expect.stringContaining('owner registered') as string,
    });
    // An id that names no finding at all: the caller's mistake, as for get_fix_suggestion (not a missing owner).
    const unknown = await call('acknowledge_fix', { findingId: 'ffffffffffffffffffff' }, admin);
    expect(unknown.error).toMatchObject({
      errorCategory: 'validation',
      isRetryable: true,
      code: 'FINDING_NOT_FOUND',
      description: expect.stringContaining('Call list_findings') as string,
    });
    const overRest = await fetch(`${server.url}/api/v1/findings/ffffffffffffffffffff/acknowledge`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(overRest.status).toBe(404);
    expect(await overRest.json()).toMatchObject({ message: 'no finding ffffffffffffffffffff' });
    await admin.close();
  });

  it('answers arguments its input schemas refuse (another JSON type, an argument it does not take) with the same envelope', async () => {
    for (const [name, args] of [
      ['get_retry_waste', { groupBy: 5 }],
      ['list_findings', { rule: ['untyped-error'] }],
      ['list_findings', { limit: '10' }],
      ['list_findings', { lmit: 10 }],
      ['get_escalation_rates', { from: 5 }],
      ['get_fix_suggestion', { findingId: 42 }],
      ['get_trace_timeline', { traceId: null }],
    ] as const) {
      expect((await call(name, args)).error, `${name} ${JSON.stringify(args)}`).toEqual({
        errorCategory: 'validation',
        isRetryable: true,
        code: 'INVALID_ARGUMENTS',
        description: expect.stringMatching(
          /^Input validation error: .*Correct the argument and retry\.$/s,
        ) as string,
      });
    }
  });

  it('tells each reason an argument is refused once (an offset past the safe integers broke two checks alike)', async () => {
    const { description } = (await call('list_findings', { offset: 1e20 })).error as { description: string };
    expect(description).toMatch(/"offset" must be a whole number from 0 to 9007199254740991/);
    expect(description.match(/must be a whole number/g)).toHaveLength(1);
  });

  it('refuses a bad page or choice of every report and findings tool in the words REST refuses it with', async () => {
    const endpoints = { client, url: server.url, key: server.readKey };
    for (const [tool, args, path] of [
      ['get_retry_waste', { limit: 0 }, 'reports/retry-waste?limit=0'],
      ['get_retry_waste', { offset: -1 }, 'reports/retry-waste?offset=-1'],
      ['get_retry_waste', { groupBy: 'agent' }, 'reports/retry-waste?groupBy=agent'],
      ['list_misclassified_results', { limit: 501 }, 'reports/misclassified-results?limit=501'],
      ['list_findings', { limit: 0 }, 'findings?limit=0'],
      ['list_findings', { offset: 1e20 }, 'findings?offset=100000000000000000000'],
      ['list_findings', { rule: 'no-such-rule' }, 'findings?rule=no-such-rule'],
      ['list_servers', { offset: 2.5 }, 'servers?offset=2.5'],
      ['get_fix_suggestion', { findingId: 'SUP-1042' }, 'findings/SUP-1042'],
    ] as const)
      await expectRefusedAlike(endpoints, tool, args, path);
  });

  it('of two bad arguments, refuses the one REST refuses (a bad window before a bad page or choice)', async () => {
    const endpoints = { client, url: server.url, key: server.readKey };
    for (const [tool, args, path] of [
      ['get_retry_waste', { from: 'x', limit: 0 }, 'reports/retry-waste?from=x&limit=0'],
      ['get_retry_waste', { groupBy: 'agent', from: 'x' }, 'reports/retry-waste?groupBy=agent&from=x'],
      [
        'list_misclassified_results',
        { from: 'x', offset: -1 },
        'reports/misclassified-results?from=x&offset=-1',
      ],
      ['list_findings', { from: 'x', rule: 'no-such-rule' }, 'findings?from=x&rule=no-such-rule'],
      ['list_findings', { to: 'x', limit: 0 }, 'findings?to=x&limit=0'],
      ['list_servers', { from: 'x', toolLimit: 0 }, 'servers?from=x&toolLimit=0'],
      ['get_fix_suggestion', { findingId: 'SUP-1042', from: 'x' }, 'findings/SUP-1042?from=x'],
    ] as const)
      await expectRefusedAlike(endpoints, tool, args, path);
  });

  it('refuses an argument a tool does not take as REST refuses a query parameter, naming those it takes', async () => {
    const overRest = (await rest('reports/escalations?groupBy=tool')) as { message: string };
    expect(overRest.message).toBe(
      'unknown query parameter "groupBy"; this endpoint takes from, to, server, tool, agent',
    );
    expect((await call('get_escalation_rates', { groupBy: 'tool' })).error).toEqual({
      errorCategory: 'validation',
      isRetryable: true,
      code: 'INVALID_ARGUMENTS',
      description:
        'Input validation error: Invalid arguments for tool get_escalation_rates: unknown argument "groupBy"; ' +
        'this tool takes from, to, server, tool, agent. Correct the argument and retry.',
    });
    const { description } = (await call('get_retry_waste', { sever: 'acme', Limit: 1 })).error as {
      description: string;
    };
    // One at a time, as REST: the first of them.
    expect(description).toContain(
      'unknown argument "sever"; this tool takes from, to, server, tool, agent, groupBy, limit, offset. Correct',
    );
  });

  it('refuses acknowledge_fix with a read key before it looks at the finding id, as REST answers 403 first', async () => {
    const overRest = await fetch(`${server.url}/api/v1/findings/SUP-1042/acknowledge`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.readKey}` },
    });
    expect(overRest.status).toBe(403);
    expect((await call('acknowledge_fix', { findingId: 'SUP-1042' })).error).toMatchObject({
      errorCategory: 'permission',
      code: 'ADMIN_KEY_REQUIRED',
    });
  });

  it('answers a tools/call for a tool it does not have with JSON-RPC -32602, not a tool result (MCP 2025-11-25)', async () => {
    const refused = await client.callTool({ name: 'get_retry_wastes', arguments: {} }).then(
      (result) => ({ result }),
      (error: unknown) => error as McpError,
    );
    expect(refused).toBeInstanceOf(McpError);
    expect(refused).toMatchObject({
      code: ErrorCode.InvalidParams,
      message: 'MCP error -32602: Unknown tool: get_retry_wastes. Call tools/list for the tools Errata has.',
    });
  });

  it('answers an empty window with empty results, not errors', async () => {
    const empty = await call('list_findings', { from: '2020-01-01T00:00:00Z', to: '2020-01-02T00:00:00Z' });
    expect(empty).toMatchObject({ ok: true, data: { total: 0, findings: [] }, error: null });
  });

  it('reads only the caller project, and refuses requests without a read key', async () => {
    const keys = server.app.get(ApiKeyService);
    const other = await server.app.get(ProjectRepository).ensureProject('other-project');
    const otherClient = await connect((await keys.create(other.id, 'read', 'cli')).key);
    const report = await call('get_retry_waste', {}, otherClient);
    expect(report.data).toMatchObject({ totals: { calls: 0 } });
    await otherClient.close();

    await expect(connect('not-a-key')).rejects.toThrow(/401/);
    const ingestOnly = await keys.create(other.id, 'ingest', 'cli');
    await expect(connect(ingestOnly.key)).rejects.toThrow(/403/);
    const get = await fetch(`${server.url}/mcp`, { headers: { authorization: `Bearer ${server.readKey}` } });
    expect(get.status).toBe(405);
  });
});
