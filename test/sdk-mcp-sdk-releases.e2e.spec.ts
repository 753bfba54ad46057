/**
 * @errata/sdk on earlier `@modelcontextprotocol/sdk` 1.x releases than the one the other specs use: its peer range is
 * `^1.0.0`, and agent frameworks pin older releases. Each release (an npm alias in devDependencies) is copied into a
 * temporary app as `node_modules/@modelcontextprotocol/sdk`, whose client calls the same release's `Server` in process:
 * a CommonJS app patched as it loads by `startErrata` (1.2.0 and later; 1.0 and 1.1 had another file layout), the
 * same calls from an ES module started with `--import @errata/sdk/register` (1.2.0 and later: their `dist/esm`
 * files, hooked by the loader), and the CommonJS app wrapped by `instrumentMcpClient` (every release).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpReceiver } from './support/otlp-receiver';

const ROOT = join(__dirname, '..');

/** The alias each release is installed under, and whether `startErrata` patches it as it loads. */
const RELEASES = [
  { version: '1.0.4', alias: 'mcp-sdk-v1.0', patched: false },
  { version: '1.2.0', alias: 'mcp-sdk-v1.2', patched: true },
  { version: '1.10.2', alias: 'mcp-sdk-v1.10', patched: true },
  { version: '1.20.2', alias: 'mcp-sdk-v1.20', patched: true },
] as const;

/**
 * The calls every app makes, the same in CommonJS and ESM: `play(mcp, wrap)` with the release's modules, returning
 * the `_meta` each call's server saw and what each call gave the host.
 */
const SCENARIO = `
const timedOut = {
  errorCategory: 'transient',
  isRetryable: true,
  description: 'The order database timed out after 5 seconds.',
};
async function play({ Client, Server, InMemoryTransport, CallToolRequestSchema, McpError }, wrap) {
  const metaSeen = [];
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
  const client = wrap(new Client({ name: 'releases-app', version: '1.0.0' }, { capabilities: {} }));
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
  return { metaSeen, results };
}
`;

/** CommonJS, `startErrata` with an in-memory exporter: patched as it loads, or MODE=manual: `instrumentMcpClient`. */
const COMMONJS_APP = `
const { InMemorySpanExporter } = require('@opentelemetry/sdk-trace-base');
const { instrumentMcpClient, startErrata } = require('@errata/sdk');
const manual = process.env.MODE === 'manual';
const exporter = new InMemorySpanExporter();
const errata = startErrata({ exporter, flushOnExit: false, instrumentMcpSdk: !manual });
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const { InMemoryTransport } = require('@modelcontextprotocol/sdk/inMemory.js');
const { CallToolRequestSchema, LATEST_PROTOCOL_VERSION, McpError } = require('@modelcontextprotocol/sdk/types.js');
${SCENARIO}
(async () => {
  const mcp = { Client, Server, InMemoryTransport, CallToolRequestSchema, McpError };
  const { metaSeen, results } = await play(mcp, (client) => (manual ? instrumentMcpClient(client) : client));
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

/**
 * ESM, started with `node --import @errata/sdk/register`: the loader hook patches the release's dist/esm client as it
 * is imported; the spans go over OTLP to the test's receiver when the event loop empties.
 */
const ESM_APP = `
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolRequestSchema, LATEST_PROTOCOL_VERSION, McpError } from '@modelcontextprotocol/sdk/types.js';
${SCENARIO}
const mcp = { Client, Server, InMemoryTransport, CallToolRequestSchema, McpError };
const { metaSeen, results } = await play(mcp, (client) => client);
const clientFile = fileURLToPath(import.meta.resolve('@modelcontextprotocol/sdk/client/index.js'));
console.log(JSON.stringify({ clientFile, protocolVersion: LATEST_PROTOCOL_VERSION, metaSeen, results }));
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
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'errata-mcp-releases-'));
  // Above each release's directory: @errata/sdk, OpenTelemetry and the copies' hoisted dependencies, for CommonJS
  // and ESM resolution alike (ESM ignores NODE_PATH).
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
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
    await writeFile(join(dir, version, 'app.cjs'), COMMONJS_APP);
    await writeFile(join(dir, version, 'app.mjs'), ESM_APP);
  }
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

interface AppRun {
  clientFile: string;
  protocolVersion: string;
  spans: { name: string; kind: number; status: number; traceparent: string; attributes: object }[];
  metaSeen: ({ traceparent?: string } | null)[];
  results: object[];
}

/** `patched` and `manual`: the CommonJS app; `esm`: the ESM app under `--import @errata/sdk/register`. */
async function runApp(version: string, mode: 'patched' | 'manual' | 'esm'): Promise<AppRun> {
  receiver.clear();
  const args = mode === 'esm' ? ['--import', '@errata/sdk/register', 'app.mjs'] : ['app.cjs'];
  const { stdout } = await promisify(execFile)(process.execPath, args, {
    cwd: join(dir, version),
    env: { ...process.env, MODE: mode, ...receiver.exporterEnv },
    timeout: 60_000,
  });
  // The CommonJS app prints its spans; the ESM app's went to the receiver.
  const printed = JSON.parse(stdout.trim()) as AppRun;
  if (mode !== 'esm') return printed;
  const spans = receiver.spans().map((span) => ({
    name: span.name,
    // OTLP numbers kinds from SPAN_KIND_UNSPECIFIED = 0, the OpenTelemetry API from INTERNAL = 0.
    kind: span.kind - 1,
    status: span.status.code,
    traceparent: `00-${span.traceId}-${span.spanId}-01`,
    attributes: span.attributes,
  }));
  return { ...printed, spans };
}

describe.each(RELEASES)('@modelcontextprotocol/sdk $version', ({ version, patched }) => {
  const modes = patched ? (['patched', 'esm', 'manual'] as const) : (['manual'] as const);
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
