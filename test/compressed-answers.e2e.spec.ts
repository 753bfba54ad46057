/**
 * What the service compresses: the dashboard's assets (brotli and gzip files written at build, chosen by the
 * request's Accept-Encoding) and the REST API's and OpenAPI document's larger answers (compressed as they are sent);
 * not OTLP's, MCP's or the health checks' answers. Raw HTTP: fetch would ask for its own codings and decode them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import express from 'express';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compressAnswers } from '../apps/server/src/http/compressed-answers';
import { DASHBOARD_DIR } from '../apps/server/src/http/dashboard';
import { SWAGGER_UI_DIR } from '../apps/server/src/http/openapi';
import { AgentTrace } from './support/agent-spans';
import { sendSpans, startTestServer, type TestServer } from './support/server';

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

function send(
  url: string,
  headers: Record<string, string> = {},
  method = 'GET',
  body?: Uint8Array | string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method, headers }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () =>
        resolve({ status: incoming.statusCode!, headers: incoming.headers, body: Buffer.concat(chunks) }),
      );
      incoming.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** The body as the client reads it, once its Content-Encoding is undone. */
function decoded(answer: Answer): Buffer {
  const coding = answer.headers['content-encoding'];
  if (coding === 'br') return brotliDecompressSync(answer.body);
  if (coding === 'gzip') return gunzipSync(answer.body);
  expect(coding).toBeUndefined();
  return answer.body;
}

const varies = (answer: Answer): boolean =>
  (answer.headers['vary'] ?? '').split(',').some((name) => name.trim().toLowerCase() === 'accept-encoding');

let server: TestServer;
const t0 = Date.UTC(2026, 10, 2, 8, 0, 0);
/** Distinct tool names: /api/v1/names lists them all, some 6 KiB of JSON. */
const TOOLS = 300;

beforeAll(async () => {
  server = await startTestServer('postgres');
  const calls = Array.from({ length: TOOLS }, (_, i) => ({
    tool: `lookup-customer-order-${String(i).padStart(4, '0')}`,
    startMs: t0 + i * 10,
    durationMs: 1,
  }));
  expect(
    await sendSpans(server.url, server.ingestKey, new AgentTrace().run('support-agent', t0, calls)),
  ).toBe(200);
  await server.catchUp();
});
afterAll(() => server?.close());

/** The static files served with the codings the build wrote beside them. */
const CODED_FILES = [
  {
    what: "the dashboard's assets",
    url: '/assets',
    dir: join(DASHBOARD_DIR, 'assets'),
    names: ['.css', '.js'],
    cacheControl: 'public, max-age=31536000, immutable',
  },
  {
    what: "the Swagger UI's script and stylesheet",
    url: '/docs',
    dir: SWAGGER_UI_DIR,
    names: ['.css', '.js', '.js'],
    cacheControl: 'public, max-age=0',
  },
];

describe.each(CODED_FILES)('$what', ({ url: prefix, dir, names: extensions, cacheControl }) => {
  const names = readdirSync(dir).filter((name) => /\.(?:js|css)$/.test(name));

  it('are built with a brotli and a gzip file beside each script and stylesheet', () => {
    expect(names.map((name) => name.slice(name.lastIndexOf('.'))).sort()).toEqual(extensions);
    for (const name of names) {
      const file = readFileSync(join(dir, name));
      const br = brotliDecompressSync(readFileSync(join(dir, `${name}.br`)));
      const gz = gunzipSync(readFileSync(join(dir, `${name}.gz`)));
      expect(br.equals(file), name).toBe(true);
      expect(gz.equals(file), name).toBe(true);
    }
  });

  it.each([
    ['br', 'br'],
    ['gzip', 'gzip'],
    ['gzip, deflate, br, zstd', 'br'], // Chromium's, over HTTPS
    ['gzip, deflate', 'gzip'], // Chromium's and Firefox's over plain HTTP
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['BR;Q=0.9, x-gzip;q=0.8', 'br'],
    ['gzip;q=0.8, br;q=0.9, identity;q=0.5', 'br'],
    ['*;q=0.5, gzip;q=0.3', 'br'],
    ['gzip;q=abc, br;q=2', undefined],
    ['*', 'br'],
    ['*;q=0.5, gzip', 'gzip'],
    ['identity;q=0, gzip;q=0.1', 'gzip'],
    ['br;q=0, gzip;q=0', undefined],
    ['br;q=0, *', 'gzip'],
    ['identity', undefined],
    ['deflate', undefined],
    ['', undefined],
    [null, undefined],
  ])(
    'Accept-Encoding: %s gets the file in %s, the same bytes once decoded, its type and caching',
    async (accept, coding) => {
      for (const name of names) {
        const file = readFileSync(join(dir, name));
        const answer = await send(
          `${server.url}${prefix}/${name}`,
          accept === null ? {} : { 'accept-encoding': accept },
        );
        expect(answer.status).toBe(200);
        expect(answer.headers['content-encoding'], name).toBe(coding);
        expect(Number(answer.headers['content-length'])).toBe(answer.body.length);
        expect(decoded(answer).equals(file), name).toBe(true);
        if (coding !== undefined) expect(answer.body.length).toBeLessThan(file.length / 2);
        expect(varies(answer)).toBe(true);
        expect(answer.headers['content-type']).toMatch(
          name.endsWith('.js') ? /^text\/javascript; charset=utf-8$/i : /^text\/css; charset=utf-8$/i,
        );
        expect(answer.headers['cache-control']).toBe(cacheControl);
        expect(answer.headers['x-content-type-options']).toBe('nosniff');
      }
    },
  );

  it('has an ETag per coding, each answered 304 by its own coding only; HEAD says what GET sends', async () => {
    const [name] = names.filter((n) => n.endsWith('.js'));
    const url = `${server.url}${prefix}/${name}`;
    const tags = new Map<string, string>();
    for (const accept of ['br', 'gzip', 'identity']) {
      const got = await send(url, { 'accept-encoding': accept });
      const head = await send(url, { 'accept-encoding': accept }, 'HEAD');
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      for (const header of [
        'content-encoding',
        'content-length',
        'content-type',
        'etag',
        'vary',
        'cache-control',
      ])
        expect(head.headers[header], `${accept} ${header}`).toBe(got.headers[header]);
      tags.set(accept, got.headers['etag']!);
    }
    expect(new Set(tags.values()).size).toBe(3);
    const revalidated = await send(url, { 'accept-encoding': 'br', 'if-none-match': tags.get('br')! });
    expect(revalidated.status).toBe(304);
    expect(varies(revalidated)).toBe(true);
    const otherCoding = await send(url, { 'accept-encoding': 'br', 'if-none-match': tags.get('gzip')! });
    expect(otherCoding.status).toBe(200);
    expect(otherCoding.headers['content-encoding']).toBe('br');
  });

  it('answers a Range request with a range of the file as it is, whatever the client accepts', async () => {
    const [name] = names.filter((n) => n.endsWith('.js'));
    const file = readFileSync(join(dir, name!));
    const answer = await send(`${server.url}${prefix}/${name}`, {
      'accept-encoding': 'gzip, deflate, br',
      range: 'bytes=100-199',
    });
    expect(answer.status).toBe(206);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.headers['content-range']).toBe(`bytes 100-199/${file.length}`);
    expect(answer.body.equals(file.subarray(100, 200))).toBe(true);
    expect(varies(answer)).toBe(true);
  });

  it('still answers 404 for an asset that is not there', async () => {
    const answer = await send(`${server.url}${prefix}/main-NOTTHERE.js`, { 'accept-encoding': 'br' });
    expect(answer.status).toBe(404);
    expect(answer.headers['content-encoding']).toBeUndefined();
  });
});

describe('the API', () => {
  const read = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
    send(`${server.url}${path}`, { authorization: `Bearer ${server.readKey}`, ...headers }, method);
  const names = `/api/v1/names?from=${new Date(t0 - 60_000).toISOString()}`;

  it('compresses a large answer for a client that takes br or gzip, to the same JSON, still not to be stored', async () => {
    const plain = await read(names);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(varies(plain)).toBe(true);
    const json = JSON.parse(plain.body.toString('utf8')) as { tools: string[] };
    expect(json.tools).toHaveLength(TOOLS);
    expect(plain.body.length).toBeGreaterThan(4096);
    for (const [accept, coding] of [
      ['gzip, deflate', 'gzip'],
      ['gzip, deflate, br', 'br'],
    ] as const) {
      const answer = await read(names, { 'accept-encoding': accept });
      expect(answer.status).toBe(200);
      expect(answer.headers['content-encoding']).toBe(coding);
      expect(Number(answer.headers['content-length'])).toBe(answer.body.length);
      expect(answer.body.length).toBeLessThan(plain.body.length / 4);
      expect(JSON.parse(decoded(answer).toString('utf8'))).toEqual(json);
      expect(answer.headers['content-type']).toBe(plain.headers['content-type']);
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(varies(answer)).toBe(true);
      // Express's weak ETag of the JSON, naming the coding: no cache or If-None-Match takes one for the other.
      expect(answer.headers['etag']).toBe(plain.headers['etag']!.replace(/"$/, `-${coding}"`));
      const head = await read(names, { 'accept-encoding': accept }, 'HEAD');
      expect(head.status).toBe(200);
      expect(head.headers['content-encoding']).toBe(coding);
      expect(head.body.length).toBe(0);
    }
  });

  it('answers a conditional request 304 with the ETag and Vary its 200 has (RFC 9110 §15.4.5), compressed or not, on every path that compresses', async () => {
    const key = { authorization: `Bearer ${server.readKey}` };
    for (const [path, headers] of [
      [names, key], // compressed
      [`${names}&limit=1`, key], // too small to be, but another answer at its URL is
      ['/docs-json', {}],
      ['/docs-yaml', {}],
      ['/docs/', {}],
      ['/docs/swagger-ui-init.js', {}],
      ['/docs/swagger-ui-bundle.js', {}], // a file, sent by the static files' handler
      ['/docs/favicon-32x32.png', {}], // an image, never compressed, at a path whose answers may be
    ] as const) {
      for (const accept of ['gzip, deflate, br', 'identity']) {
        const ok = await send(`${server.url}${path}`, { ...headers, 'accept-encoding': accept });
        expect(ok.status, path).toBe(200);
        expect(varies(ok), `${path} ${accept}`).toBe(true);
        const notModified = await send(`${server.url}${path}`, {
          ...headers,
          'accept-encoding': accept,
          'if-none-match': ok.headers['etag']!,
        });
        // Revalidated with the tag it was sent, its coding's, and told that tag again.
        expect(notModified.status, `${path} ${accept}`).toBe(304);
        expect(notModified.headers['vary'], `${path} ${accept}`).toBe(ok.headers['vary']);
        expect(notModified.headers['etag'], `${path} ${accept}`).toBe(ok.headers['etag']);
        if (path === names) expect(ok.headers['content-encoding'] !== undefined).toBe(accept !== 'identity');
      }
    }
  });

  it('sends a small answer as it is', async () => {
    const small = await read(`${names}&limit=1`, { 'accept-encoding': 'gzip, br' });
    expect(small.status).toBe(200);
    expect(small.body.length).toBeLessThan(1024);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(small.body.toString('utf8'))).toMatchObject({ limit: 1 });
    const refused = await send(`${server.url}${names}`, { 'accept-encoding': 'gzip, br' });
    expect(refused.status).toBe(401);
    expect(refused.headers['content-encoding']).toBeUndefined();
  });

  it('compresses the OpenAPI document (JSON, YAML, and the Swagger UI script that embeds it)', async () => {
    for (const path of ['/docs-json', '/docs-yaml', '/docs/swagger-ui-init.js']) {
      const plain = await send(`${server.url}${path}`);
      const answer = await send(`${server.url}${path}`, { 'accept-encoding': 'gzip' });
      expect(answer.status, path).toBe(200);
      expect(answer.headers['content-encoding'], path).toBe('gzip');
      expect(decoded(answer).equals(plain.body), path).toBe(true);
    }
  });

  it('does not compress the health checks or the OTLP receiver', async () => {
    const accept = { 'accept-encoding': 'gzip, deflate, br' };
    for (const path of ['/healthz', '/readyz']) {
      const answer = await send(`${server.url}${path}`, accept);
      expect(answer.status, path).toBe(200);
      expect(answer.headers['content-encoding'], path).toBeUndefined();
    }
    const spans = new AgentTrace().run('agent', t0, [{ tool: 'ping', startMs: t0, durationMs: 1 }]);
    const otlp = await send(
      `${server.url}/v1/traces`,
      { ...accept, 'content-type': 'application/x-protobuf', authorization: `Bearer ${server.ingestKey}` },
      'POST',
      ProtobufTraceSerializer.serializeRequest(spans)!,
    );
    expect(otlp.status).toBe(200);
    expect(otlp.headers['content-encoding']).toBeUndefined();
  });
});

describe('the MCP endpoint', () => {
  it("compresses its JSON answers for the MCP SDK's client over Node's fetch, which asks for them and reads them", async () => {
    /** The coding of the answer to each JSON-RPC method the client sent. */
    const codings = new Map<string, string | null>();
    const mcp = new Client({ name: 'errata-e2e', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${server.readKey}` } },
        fetch: async (url, init) => {
          const response = await fetch(url, init);
          if (typeof init?.body === 'string') {
            const { method } = JSON.parse(init.body) as { method: string };
            codings.set(method, response.headers.get('content-encoding'));
          }
          return response;
        },
      }),
    );
    try {
      const { tools } = await mcp.listTools();
      expect(tools.map((tool) => tool.name)).toContain('list_findings');
      const listed = (await mcp.callTool({ name: 'list_findings', arguments: {} })) as CallToolResult;
      expect(listed.isError).toBeUndefined();
      expect(listed.structuredContent).toMatchObject({ ok: true, error: null });
      // tools/list's answer is some 10 KiB of JSON; initialize's and this tool call's are under 1 KiB. Node 20's fetch
      // asks for gzip and deflate, a later one for br too.
      expect(Object.fromEntries(codings)).toEqual({
        initialize: null,
        'notifications/initialized': null,
        'tools/list': expect.stringMatching(/^(?:gzip|br)$/) as string,
        'tools/call': null,
      });
    } finally {
      await mcp.close();
    }
  });

  it('sends a JSON answer as it is to a client that does not ask for a coding', async () => {
    const answer = await send(
      `${server.url}/mcp`,
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${server.readKey}`,
      },
      'POST',
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    );
    expect(answer.status).toBe(200);
    expect(answer.body.length).toBeGreaterThan(1024);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(Number(answer.headers['content-length'])).toBe(answer.body.length);
    expect(varies(answer)).toBe(true);
    const coded = await send(
      `${server.url}/mcp`,
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${server.readKey}`,
        'accept-encoding': 'gzip, deflate, br',
      },
      'POST',
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    );
    expect(coded.headers['content-encoding']).toBe('br');
    expect(Number(coded.headers['content-length'])).toBe(coded.body.length);
    expect(decoded(coded).equals(answer.body)).toBe(true);
  });

  it("never holds back an SSE stream: the SDK's server transport answering in SSE behind the same middleware", async () => {
    // Errata's endpoint answers in JSON; an answer in SSE (the transport's default) must still go out event by event.
    // The tool waits until the client has read its progress notification, which it never would if the stream were held.
    const app = express();
    app.use('/mcp', compressAnswers);
    let progressRead: () => void = () => undefined;
    const read = new Promise<void>((resolve) => (progressRead = resolve));
    app.post('/mcp', async (request, response) => {
      const mcpServer = new McpServer({ name: 'sse', version: '1.0.0' });
      mcpServer.registerTool('wait', { description: 'waits for its progress to be read' }, async (extra) => {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: extra._meta!.progressToken!, progress: 1, message: 'x'.repeat(4096) },
        });
        await read;
        return { content: [{ type: 'text', text: 'y'.repeat(4096) }] };
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      response.on('close', () => void mcpServer.close());
      await mcpServer.connect(transport);
      await transport.handleRequest(request, response);
    });
    const listener = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => listener.once('listening', resolve));
    const { port } = listener.address() as { port: number };
    const contentTypes: (string | null)[] = [];
    const mcp = new Client({ name: 'sse-client', version: '1.0.0' });
    try {
      await mcp.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
          fetch: async (url, init) => {
            const response = await fetch(url, init);
            contentTypes.push(response.headers.get('content-type'));
            return response;
          },
        }),
      );
      const result = await mcp.callTool({ name: 'wait', arguments: {} }, undefined, {
        onprogress: () => progressRead(),
      });
      expect(result.content).toEqual([{ type: 'text', text: 'y'.repeat(4096) }]);
      expect(contentTypes).toContain('text/event-stream');
    } finally {
      await mcp.close();
      listener.close();
    }
  });
});
