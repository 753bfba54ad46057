/**
 * Module patching of a nested copy of the MCP SDK: npm installs one under a dependency when versions conflict
 * (`node_modules/agent-lib/node_modules/@modelcontextprotocol/sdk`). A CommonJS app calls startErrata, then that
 * dependency requires its own copy, which must be patched too, as must a copy it loaded before startErrata ran.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NPM_SERVER_ENTRIES } from './support/npm-mcp-servers';

const ROOT = join(__dirname, '..');
const SDK = join(ROOT, 'node_modules/@modelcontextprotocol/sdk');

const AGENT_LIB = `
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
module.exports = { Client, StdioClientTransport, clientFile: require.resolve('@modelcontextprotocol/sdk/client/index.js') };
`;

const APP = `
const { InMemorySpanExporter } = require('@opentelemetry/sdk-trace-base');
const { startErrata } = require('@errata/sdk');
const loadedFirst = process.env.LOAD_FIRST === '1' ? require('agent-lib') : null;
const exporter = new InMemorySpanExporter();
const errata = startErrata({ exporter, flushOnExit: false });
const lib = loadedFirst ?? require('agent-lib');

(async () => {
  const client = new lib.Client({ name: 'nested-copy-app', version: '1.0.0' });
  await client.connect(
    new lib.StdioClientTransport({ command: process.execPath, args: [process.env.EVERYTHING, 'stdio'], stderr: 'ignore' }),
  );
  await client.callTool({ name: 'echo', arguments: { message: 'from the nested copy' } });
  await client.close();
  await errata.forceFlush();
  const spans = exporter.getFinishedSpans().map((span) => span.name);
  console.log(JSON.stringify({ clientFile: lib.clientFile, spans }));
  await errata.shutdown();
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'errata-nested-'));
  const lib = join(dir, 'node_modules/agent-lib');
  const nestedSdk = join(lib, 'node_modules/@modelcontextprotocol/sdk');
  await mkdir(nestedSdk, { recursive: true });
  // A real copy (a symlink would resolve to the hoisted one): the package.json, the CommonJS build and the
  // dependencies npm nested under it (its ajv).
  await cp(join(SDK, 'package.json'), join(nestedSdk, 'package.json'));
  for (const part of ['dist/cjs', 'node_modules']) {
    if (existsSync(join(SDK, part))) await cp(join(SDK, part), join(nestedSdk, part), { recursive: true });
  }
  await writeFile(join(lib, 'package.json'), JSON.stringify({ name: 'agent-lib', main: 'index.js' }));
  await writeFile(join(lib, 'index.js'), AGENT_LIB);
  await writeFile(join(dir, 'app.cjs'), APP);
});
afterAll(() => (dir === undefined ? undefined : rm(dir, { recursive: true, force: true })));

it.each([
  ['required after startErrata', '0'],
  ['already loaded when startErrata runs', '1'],
])("patches a dependency's own copy of the MCP SDK, %s", async (_when, loadFirst) => {
  const { stdout } = await promisify(execFile)(process.execPath, [join(dir, 'app.cjs')], {
    cwd: dir,
    // The copy's own dependencies (zod, ajv, …) and @errata/sdk come from the repository's node_modules.
    env: {
      ...process.env,
      NODE_PATH: join(ROOT, 'node_modules'),
      EVERYTHING: NPM_SERVER_ENTRIES.everything,
      LOAD_FIRST: loadFirst,
    },
    timeout: 60_000,
  });
  const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as { clientFile: string; spans: string[] };
  expect(report.clientFile).toBe(
    join(dir, 'node_modules/agent-lib/node_modules/@modelcontextprotocol/sdk/dist/cjs/client/index.js'),
  );
  expect(report.spans).toEqual(['tools/call echo']);
});
