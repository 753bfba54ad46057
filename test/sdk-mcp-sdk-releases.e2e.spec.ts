/**
 * @errata/sdk on earlier `@modelcontextprotocol/sdk` 1.x releases than the one the other specs use: its peer range is
 * `^1.0.0`, and agent frameworks pin older releases. Each release (an npm alias in devDependencies) is copied into a
 * temporary app as `node_modules/@modelcontextprotocol/sdk`, where a CommonJS app calls its client against the same
 * release's `Server` in process: patched as it loads by `startErrata` (1.2.0 and later; 1.0 and 1.1 had another
 * file layout) and wrapped by `instrumentMcpClient` (every release).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '..');

/** The alias each release is installed under, and whether `startErrata` patches it as it loads. */
const RELEASES = [
  { version: '1.0.4', alias: 'mcp-sdk-v1.0', patched: false },
  { version: '1.2.0', alias: 'mcp-sdk-v1.2', patched: true },
  { version: '1.10.2', alias: 'mcp-sdk-v1.10', patched: true },
  { version: '1.20.2', alias: 'mcp-sdk-v1.20', patched: true },
] as const;

const APP = `
const { InMemorySpanExporter } = require('@opentelemetry/sdk-trace-base');
const { instrumentMcpClient, startErrata } = require('@errata/sdk');
const manual = process.env.MODE === 'manual';
const exporter = new InMemorySpanExporter();
const errata = startErrata({ exporter, flushOnExit: false, instrumentMcpSdk: !manual });
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const { InMemoryTransport } = require('@modelcontextprotocol/sdk/inMemory.js');
const { CallToolRequestSchema, LATEST_PROTOCOL_VERSION, McpError } = require('@modelcontextprotocol/sdk/types.js');

const timedOut = {
  errorCategory: 'transient',
  isRetryable: true,
  description: 'The order database timed out after 5 seconds.',
};
const metaSeen = [];
(async () => {
  const server = new Server({ name: 'orders', version: '3.1.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    metaSeen.push(request.params._meta ?? null);
    const { name } = request.params;
    if (name === 'lookup_order') return { content: [{ type: 'text', text: '{"orders":[{"id":"A-1"},{"id":"A-2"}]}' }] };
    if (name === 'search_orders') return { content: [{ type: 'text', text: '{"orders":[]}' }] };
    if (name === 'order_status') return { isError: true, content: [{ type: 'text', text: JSON.stringify(timedOut) }] };
    throw new McpError(-32602, 'Invalid arguments: order_id is required');
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const created = new Client({ name: 'releases-app', version: '1.0.0' }, { capabilities: {} });
  const client = manual ? instrumentMcpClient(created) : created;
  await client.connect(clientSide);
  const results = [];
  for (const name of ['lookup_order', 'search_orders', 'order_status', 'cancel_order']) {
    try {
      results.push(await client.callTool({ name, arguments: { order_id: 'A-1' } }));
    } catch (error) {
      results.push({ thrown: error.code });
    }
  }
  await client.close();
  await errata.forceFlush();
  const spans = exporter.getFinishedSpans().map((span) => ({
    name: span.name,
    kind: span.kind,
    status: span.status.code,
    traceparent: '00-' + span.spanContext().traceId + '-' + span.spanContext().spanId + '-01',
    attributes: span.attributes,
  }));
  const clientFile = require.resolve('@modelcontextprotocol/sdk/client/index.js');
  console.log(JSON.stringify({ clientFile, protocolVersion: LATEST_PROTOCOL_VERSION, spans, metaSeen, results }));
  await errata.shutdown();
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

/** What every span carries, whatever its outcome. */
const common = (tool: string, protocolVersion: string, requestId: number) => ({
  'mcp.method.name': 'tools/call',
  'gen_ai.operation.name': 'execute_tool',
  'gen_ai.tool.name': tool,
  'errata.server.name': 'orders',
  'errata.server.version': '3.1.0',
  'mcp.protocol.version': protocolVersion,
  'errata.args.hash': expect.stringMatching(/^[0-9a-f]{32}$/),
  'errata.args.size': 18,
  'jsonrpc.request.id': String(requestId),
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'errata-mcp-releases-'));
  await writeFile(join(dir, 'app.cjs'), APP);
  for (const { version, alias } of RELEASES) {
    // A real copy (a symlink resolves to the alias's own path, which no app requires): its package.json, its
    // build and the dependencies npm nested under it (zod 3).
    const from = join(ROOT, 'node_modules', alias);
    const to = join(dir, version, 'node_modules/@modelcontextprotocol/sdk');
    await mkdir(to, { recursive: true });
    await cp(join(from, 'package.json'), join(to, 'package.json'));
    for (const part of ['dist', 'node_modules']) {
      if (existsSync(join(from, part))) await cp(join(from, part), join(to, part), { recursive: true });
    }
  }
});
afterAll(() => (dir === undefined ? undefined : rm(dir, { recursive: true, force: true })));

async function runApp(version: string, mode: 'patched' | 'manual') {
  const { stdout } = await promisify(execFile)(process.execPath, [join(dir, 'app.cjs')], {
    cwd: join(dir, version),
    // The release's copy is found from the working directory; @errata/sdk and the copy's hoisted dependencies
    // come from the repository's node_modules.
    env: {
      ...process.env,
      NODE_PATH: `${join(dir, version, 'node_modules')}:${join(ROOT, 'node_modules')}`,
      MODE: mode,
    },
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim()) as {
    clientFile: string;
    protocolVersion: string;
    spans: { name: string; kind: number; status: number; traceparent: string; attributes: object }[];
    metaSeen: ({ traceparent?: string } | null)[];
    results: object[];
  };
}

describe.each(RELEASES)('@modelcontextprotocol/sdk $version', ({ version, patched }) => {
  const modes = patched ? (['patched', 'manual'] as const) : (['manual'] as const);
  it.each(modes)('gets the same spans, %s, as the current release', async (mode) => {
    const { clientFile, protocolVersion, spans, metaSeen, results } = await runApp(version, mode);
    expect(clientFile.startsWith(join(dir, version, 'node_modules/@modelcontextprotocol/sdk/dist/'))).toBe(
      true,
    );
    // The host's results and errors are what the MCP SDK gave.
    expect(results).toEqual([
      { content: [{ type: 'text', text: '{"orders":[{"id":"A-1"},{"id":"A-2"}]}' }] },
      { content: [{ type: 'text', text: '{"orders":[]}' }] },
      {
        isError: true,
        content: [
          {
            type: 'text',
            text: '{"errorCategory":"transient","isRetryable":true,"description":"The order database timed out after 5 seconds."}',
          },
        ],
      },
      { thrown: -32602 },
    ]);
    // request ids: 0 is the initialize request.
    expect(spans).toEqual([
      {
        name: 'tools/call lookup_order',
        kind: 2,
        status: 0,
        traceparent: expect.any(String),
        attributes: {
          ...common('lookup_order', protocolVersion, 1),
          'errata.result.is_error': false,
          'errata.result.empty': false,
          'errata.result.item_count': 2,
        },
      },
      {
        name: 'tools/call search_orders',
        kind: 2,
        status: 0,
        traceparent: expect.any(String),
        attributes: {
          ...common('search_orders', protocolVersion, 2),
          'errata.result.is_error': false,
          'errata.result.empty': true,
          'errata.result.item_count': 0,
          'errata.result.text': '{"orders":[]}',
        },
      },
      {
        name: 'tools/call order_status',
        kind: 2,
        status: 2,
        traceparent: expect.any(String),
        attributes: {
          ...common('order_status', protocolVersion, 3),
          'error.type': 'tool_error',
          'errata.result.is_error': true,
          'errata.result.empty': false,
          'errata.result.text':
            '{"errorCategory":"transient","isRetryable":true,"description":"The order database timed out after 5 seconds."}',
          'errata.error.category': 'transient',
          'errata.error.retryable': true,
        },
      },
      {
        name: 'tools/call cancel_order',
        kind: 2,
        status: 2,
        traceparent: expect.any(String),
        attributes: {
          ...common('cancel_order', protocolVersion, 4),
          'error.type': '-32602',
          'rpc.response.status_code': '-32602',
        },
      },
    ]);
    // Each call's server saw the trace context of its span.
    expect(metaSeen.map((meta) => meta?.traceparent)).toEqual(spans.map((span) => span.traceparent));
  });
});
