/**
 * A parameter an endpoint does not take is refused, not ignored: a misspelt `groupby`, `sever` or `Limit` would
 * otherwise answer for everything the caller meant to leave out. The parameters an endpoint documents in its
 * OpenAPI are the ones it takes, over REST; over MCP, each tool's input schema refuses arguments it does not name.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectRepository } from '../apps/server/src/repositories/project.repository';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { connectErrataMcp, startTestServer, type TestServer } from './support/server';

let server: TestServer;
let admin: string;

beforeAll(async () => {
  server = await startTestServer('postgres');
  const project = await server.app.get(ProjectRepository).ensureProject('default');
  admin = (await server.app.get(ApiKeyService).create(project.id, 'admin', 'cli')).key;
}, 60_000);
afterAll(() => server?.close());

async function get(path: string, key = admin) {
  const response = await fetch(`${server.url}/api/v1/${path}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  return { status: response.status, body: (await response.json()) as { message?: string } };
}

const FINDING = '0123456789abcdef0123';
const TRACE = '0123456789abcdef0123456789abcdef';

describe('REST: a query parameter the endpoint does not take', () => {
  it.each([
    ['reports/retry-waste?groupby=tool', 'groupby'],
    ['reports/escalations?group_by=category', 'group_by'],
    ['reports/misclassified-results?sever=acme', 'sever'],
    ['reports/subagent-coverage?from=2026-11-01&until=2026-11-02', 'until'],
    ['reports/timeseries?from=2026-11-29T00:00:00Z&stepp=day', 'stepp'],
    ['servers?server[]=acme', 'server[]'],
    ['findings?Limit=1', 'Limit'],
    [`findings/${FINDING}?offset=1`, 'offset'],
    [`traces/${TRACE}?from=2026-11-29`, 'from'],
    ['fixes?server=acme', 'server'],
    ['deliveries?state=dead', 'state'],
    ['owners?server=acme', 'server'],
  ])('GET /api/v1/%s answers 400 naming "%s"', async (path, name) => {
    const { status, body } = await get(path);
    expect(status).toBe(400);
    expect(body.message).toContain(`unknown query parameter "${name}"`);
  });

  it('says which parameters the endpoint takes', async () => {
    const { body } = await get('reports/escalations?colour=red');
    expect(body.message).toBe(
      'unknown query parameter "colour"; this endpoint takes from, to, server, tool, agent',
    );
    expect((await get('owners?x=1')).body.message).toBe(
      'unknown query parameter "x"; this endpoint takes none',
    );
    expect((await get('fixes?x=1')).body.message).toBe(
      'unknown query parameter "x"; this endpoint takes limit, offset, state',
    );
  });

  it('takes every parameter it documents', async () => {
    const window = 'from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00.500Z&server=acme&tool=t&agent=a';
    for (const path of [
      `reports/retry-waste?${window}&groupBy=tool`,
      `reports/escalations?${window}`,
      `reports/misclassified-results?${window}`,
      `reports/subagent-coverage?${window}`,
      `reports/timeseries?${window}&step=hour&groupBy=server`,
      `servers?${window}`,
      `findings?${window}&rule=untyped-error&limit=5&offset=0`,
      'findings?rule=&limit=50&offset=0', // the README's example: an empty parameter is one not given
      'deliveries?status=dead',
      'deliveries?status=&limit=5&offset=0',
      'fixes',
      'fixes?state=verified&limit=5&offset=0',
      'owners',
    ]) {
      expect((await get(path)).status, path).toBe(200);
    }
  });

  it('answers 400 for a parameter given twice, a bound finer than a millisecond, and an upper-case finding id', async () => {
    for (const [path, message] of [
      ['findings?limit=1&limit=2', '"limit" must be given once'],
      ['findings?rule=untyped-error&rule=leaky-error', '"rule" must be given once'],
      ['deliveries?status=dead&status=pending', '"status" must be given once'],
      ['fixes?state=verified&state=regressed', '"state" must be given once'],
      ['reports/retry-waste?server=a&server=b', '"server" must be given once'],
      // Upper-case hex is no finding id: the answer says which digits are.
      ['findings/ABCDEF0123456789ABCD', 'is not a finding id (20 lowercase hex digits)'],
      [
        'reports/retry-waste?from=2026-11-30T12:00:00.000900Z',
        '"from" may be given to the millisecond at most',
      ],
    ]) {
      const { status, body } = await get(path!);
      expect(status, path).toBe(400);
      expect(body.message, path).toContain(message);
    }
  });

  it('answers 400 naming the id for an owner or delivery id that is no UUID', async () => {
    for (const path of ['owners/not-a-uuid/enable', 'deliveries/not-a-uuid/redeliver']) {
      const response = await fetch(`${server.url}/api/v1/${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}` },
      });
      expect(response.status, path).toBe(400);
      expect(((await response.json()) as { message: string }).message, path).toBe(
        '"id" must be a UUID, as the lists give them',
      );
    }
  });
});

describe('REST: a body field the endpoint does not take', () => {
  it('POST /owners answers 400 naming it, and registers nobody (version_range would have meant every version)', async () => {
    const response = await fetch(`${server.url}/api/v1/owners`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        server: 'acme',
        webhookUrl: 'https://hooks.example.com/errata',
        version_range: '>=1.2.0 <2',
      }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toBe(
      'unknown field "version_range": the body takes "server", "versionRange", "webhookUrl", "contact"',
    );
    expect((await get('owners')).body).toEqual([]);
  });

  it.each([
    [`findings/${FINDING}/acknowledge`, { by: 'alice' }, 'by'],
    ['owners/00000000-0000-4000-8000-000000000000/rotate-secret', { secret: 'whsec_x' }, 'secret'],
    ['owners/00000000-0000-4000-8000-000000000000/enable', { enabled: true }, 'enabled'],
    ['deliveries/00000000-0000-4000-8000-000000000000/redeliver', { at: 'now' }, 'at'],
  ])('POST /api/v1/%s, which takes no body, answers 400 naming a field given', async (path, body, name) => {
    const post = (sent?: string) =>
      fetch(`${server.url}/api/v1/${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: sent,
      });
    // The acknowledgement would otherwise be recorded as by "api", not by alice, without a word
    const refused = await post(JSON.stringify(body));
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toBe(
      `unknown field "${name}": the body takes no fields`,
    );
    // No body, or an empty object, is what it takes: on to the id (none such here)
    expect((await post()).status).toBe(404);
    expect((await post('{}')).status).toBe(404);
  });
});

describe('REST: keys', () => {
  it('a 401 names the Bearer scheme, and says when the key given was not accepted (RFC 6750)', async () => {
    const missing = await fetch(`${server.url}/api/v1/reports/retry-waste`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="errata"');
    const wrong = await fetch(`${server.url}/api/v1/reports/retry-waste`, {
      headers: { authorization: 'Bearer not-a-key-of-this-server' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="errata", error="invalid_token"');
  });

  it('a 403 says which key the endpoint needs', async () => {
    const { status, body } = await get('owners', server.readKey);
    expect(status).toBe(403);
    expect(body.message).toBe('this is a read key; this endpoint needs an admin key');
  });
});

describe('MCP: an argument the tool does not take', () => {
  it('is INVALID_ARGUMENTS naming it, and every input schema says it takes no others', async () => {
    const mcp = await connectErrataMcp(server.url, server.readKey);
    try {
      for (const [tool, args, name] of [
        ['get_escalation_rates', { groupBy: 'category' }, 'groupBy'],
        ['list_findings', { Limit: 1 }, 'Limit'],
        ['get_retry_waste', { sever: 'acme' }, 'sever'],
      ] as const) {
        const result = (await mcp.callTool({ name: tool, arguments: args })) as CallToolResult;
        expect(result.isError, tool).toBe(true);
        expect(result.structuredContent, tool).toMatchObject({
          ok: false,
          error: { errorCategory: 'validation', code: 'INVALID_ARGUMENTS' },
        });
        expect(JSON.stringify(result.structuredContent), tool).toContain(name);
      }
      const ok = (await mcp.callTool({
        name: 'list_findings',
        arguments: { limit: 1, server: 'acme' },
      })) as CallToolResult;
      expect(ok.isError).toBeFalsy();
      const { tools } = await mcp.listTools();
      expect(tools.length).toBeGreaterThan(0);
      for (const tool of tools)
        expect(tool.inputSchema, tool.name).toMatchObject({ additionalProperties: false });
    } finally {
      await mcp.close();
    }
  });
});

describe('MCP: a request whose params are malformed', () => {
  it('is JSON-RPC -32602 Invalid params, saying what is wrong, not -32603 Internal error', async () => {
    const post = async (params: unknown) => {
      const response = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${server.readKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params }),
      });
      return (await response.json()) as { error?: { code: number; message: string } };
    };
    const noName = await post({ arguments: {} });
    expect(noName.error?.code).toBe(-32602);
    // Said once: the client's McpError writes "MCP error -32602: " before it again.
    expect(noName.error?.message).toMatch(/^Invalid params for tools\/call: params\.name: /);
    const textArguments = await post({ name: 'list_findings', arguments: 'limit=1' });
    expect(textArguments.error?.code).toBe(-32602);
    expect(textArguments.error?.message).toMatch(/params\.arguments: /);
  });
});
