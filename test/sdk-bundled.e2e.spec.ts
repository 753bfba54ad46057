/**
 * `instrumentMcpClient` in bundled code: an agent whose MCP SDK esbuild inlined and minified (class names become
 * one letter), and one with its own subclasses of the SDK's transports. Both talk to server-everything over
 * stdio and Streamable HTTP, and their spans must say which transport carried the call.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NPM_SERVER_ENTRIES, startEverythingHttp } from './support/npm-mcp-servers';

const ROOT = join(__dirname, '..');

/** The agent: one echo over stdio, one over HTTP; prints the transport attributes of its two spans. */
const AGENT = `
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { instrumentMcpClient } from '@errata/sdk';
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
const subclassed = process.env.AGENT_SUBCLASS_TRANSPORTS === '1';
class LoggingStdioTransport extends StdioClientTransport {}
class AuthedHttpTransport extends StreamableHTTPClientTransport {}
const Stdio = subclassed ? LoggingStdioTransport : StdioClientTransport;
const Http = subclassed ? AuthedHttpTransport : StreamableHTTPClientTransport;

async function echoOver(transport) {
  const client = instrumentMcpClient(new Client({ name: 'bundled-agent', version: '1.0.0' }));
  await client.connect(transport);
  await client.callTool({ name: 'echo', arguments: { message: 'bundled' } });
  await client.close();
}

(async () => {
  await echoOver(new Stdio({ command: process.execPath, args: [process.env.EVERYTHING, 'stdio'], stderr: 'ignore' }));
  await echoOver(new Http(new URL(process.env.EVERYTHING_URL)));
  const keys = ['network.transport', 'network.protocol.name', 'server.address', 'server.port'];
  const spans = exporter.getFinishedSpans().map((span) => Object.fromEntries(keys.map((key) => [key, span.attributes[key] ?? null])));
  console.log(JSON.stringify(spans));
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

let dir: string;
let http: Awaited<ReturnType<typeof startEverythingHttp>>;
let bundle: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'errata-bundled-'));
  await writeFile(join(dir, 'agent.mjs'), AGENT);
  bundle = join(dir, 'agent.min.cjs');
  // The MCP SDK inlined and minified; @errata/sdk and OpenTelemetry stay packages, as an app's bundler often keeps them.
  await build({
    entryPoints: [join(dir, 'agent.mjs')],
    outfile: bundle,
    bundle: true,
    minify: true,
    platform: 'node',
    format: 'cjs',
    nodePaths: [join(ROOT, 'node_modules')],
    external: ['@errata/sdk', '@opentelemetry/*'],
    logLevel: 'error',
  });
  http = await startEverythingHttp();
}, 60_000);
/**
 * A single-file ES module bundle of an agent that starts Errata, everything inlined (OpenTelemetry and @errata/sdk
 * too), with the `require` banner esbuild's documentation gives for CommonJS dependencies that require Node's own
 * modules. Prints the names of the spans Errata exported.
 */
const ESM_AGENT = `
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { instrumentMcpClient, startErrata, withAgentRun } from '@errata/sdk';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';

const exporter = new InMemorySpanExporter();
const errata = startErrata({ exporter, flushOnExit: false });
const client = instrumentMcpClient(new Client({ name: 'esm-bundled-agent', version: '1.0.0' }));
await client.connect(new StdioClientTransport({ command: process.execPath, args: [process.env.EVERYTHING, 'stdio'], stderr: 'ignore' }));
await withAgentRun({ name: 'bundled' }, () => client.callTool({ name: 'echo', arguments: { message: 'esm' } }));
await client.close();
await errata.forceFlush();
console.log(JSON.stringify(exporter.getFinishedSpans().map((span) => span.name).sort()));
await errata.shutdown();
`;
const REQUIRE_BANNER =
  "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

afterAll(async () => {
  http?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function runAgent(env: Record<string, string>): Promise<unknown> {
  const { stdout } = await promisify(execFile)(process.execPath, [bundle], {
    env: {
      ...process.env,
      NODE_PATH: join(ROOT, 'node_modules'),
      EVERYTHING: NPM_SERVER_ENTRIES.everything,
      EVERYTHING_URL: http.url.href,
      ...env,
    },
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

describe('a bundled agent', () => {
  const expected = () => [
    {
      'network.transport': 'pipe',
      'network.protocol.name': null,
      'server.address': null,
      'server.port': null,
    },
    {
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'server.address': '127.0.0.1',
      'server.port': Number(http.url.port),
    },
  ];

  it('with the MCP SDK minified, its spans still name the stdio and HTTP transports', async () => {
    expect(await runAgent({})).toEqual(expected());
  });

  it('with transports of its own that extend the SDK ones, the same', async () => {
    expect(await runAgent({ AGENT_SUBCLASS_TRANSPORTS: '1' })).toEqual(expected());
  });
});

describe('a single-file ES module bundle that starts Errata', () => {
  it('starts (no __dirname in an ES module) and exports its run and call', async () => {
    await writeFile(join(dir, 'esm-agent.mjs'), ESM_AGENT);
    const esmBundle = join(dir, 'esm-agent.bundle.mjs');
    await build({
      entryPoints: [join(dir, 'esm-agent.mjs')],
      outfile: esmBundle,
      bundle: true,
      platform: 'node',
      format: 'esm',
      banner: { js: REQUIRE_BANNER },
      nodePaths: [join(ROOT, 'node_modules')],
      logLevel: 'error',
    });
    const { stdout } = await promisify(execFile)(process.execPath, [esmBundle], {
      env: { ...process.env, EVERYTHING: NPM_SERVER_ENTRIES.everything },
      cwd: dir, // no node_modules to fall back on
      timeout: 60_000,
    });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual([
      'invoke_agent bundled',
      'tools/call echo',
    ]);
  }, 60_000);
});
