/**
 * @errata/sdk as a user installs it (libs/sdk/README.md, "Install"): `npm pack` of the built packages, installed
 * into a fresh TypeScript project with npm (from the cache `npm ci` filled), then the README's quick start,
 * copied from the README itself, compiled with tsc and run against a real Errata.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/server';

const run = promisify(execFile);
const ROOT = join(__dirname, '..');
const README_ENDPOINT = "'http://localhost:4318'";

/** The installed version of a package the root installed, so that npm finds it in its cache. */
async function versionOf(name: string): Promise<string> {
  const manifest = JSON.parse(await readFile(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
    version: string;
  };
  return `${name}@${manifest.version}`;
}

/** The first TypeScript block under the heading in libs/sdk/README.md. */
async function readmeBlock(heading: string): Promise<string> {
  const readme = await readFile(join(ROOT, 'libs/sdk/README.md'), 'utf8');
  const section = readme.slice(readme.indexOf(`${heading}\n`));
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (!readme.includes(`${heading}\n`) || block === undefined)
    throw new Error(`libs/sdk/README.md has no TypeScript block under "${heading}"`);
  return block;
}

let server: TestServer;
let project: string;
beforeAll(async () => {
  server = await startTestServer('postgres');
  project = await mkdtemp(join(tmpdir(), 'errata-sdk-user-'));
  await run('npm', ['pack', './libs/domain', './libs/sdk', '--pack-destination', project], { cwd: ROOT });
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({ name: 'quick-start-agent', private: true, type: 'module' }), // as the README says
  );
  const dependencies = await Promise.all(
    [
      '@opentelemetry/api',
      '@modelcontextprotocol/sdk',
      '@modelcontextprotocol/server-everything',
      '@types/node',
    ].map(versionOf),
  );
  await run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      './errata-domain-0.1.0.tgz',
      './errata-sdk-0.1.0.tgz',
      ...dependencies,
    ],
    { cwd: project, timeout: 120_000 },
  );
}, 180_000);
afterAll(async () => {
  await server?.close();
  await rm(project, { recursive: true, force: true });
});

async function storedToolCalls(): Promise<{ tool: string | null; outcome: string | null }[]> {
  await server.catchUp();
  const { rows } = await sql<{ tool: string | null; outcome: string | null }>`
    SELECT tool_name AS tool, outcome FROM event WHERE type = 'ToolCallObserved' ORDER BY start_time`.execute(
    server.db,
  );
  return rows;
}

it('in a project that installed the packed SDK, the README quick start compiles, runs, exits and reaches Errata', async () => {
  const quickStart = await readmeBlock('## Quick start (TypeScript agent)');
  expect(quickStart).toContain(README_ENDPOINT);
  // Issue 3 asks for a ten-line quick start: ten lines of code below the imports.
  const codeLines = quickStart
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('import '));
  expect(codeLines).toHaveLength(10);
  // The project is set up as the README tells users, above the quick start: an ES module (top-level await).
  const readme = await readFile(join(ROOT, 'libs/sdk/README.md'), 'utf8');
  const start = readme.indexOf('## Quick start (TypeScript agent)\n');
  const intro = readme.slice(start, readme.indexOf('```ts', start));
  for (const setting of ['"type": "module"', '"module": "nodenext"', '"types": ["node"]'])
    expect(intro).toContain(setting);
  await writeFile(join(project, 'agent.ts'), quickStart.replace(README_ENDPOINT, `'${server.url}'`));
  // Compiled along: its catch variables (unknown) go to withToolCall and toolCallSpanId as they are.
  await writeFile(join(project, 'retries.ts'), await readmeBlock('### Retries'));
  await writeFile(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        // The strictest setting users pick for optional options: `apiKey: process.env.X` must compile under it.
        exactOptionalPropertyTypes: true,
        skipLibCheck: true,
        types: ['node'],
        outDir: 'out',
      },
      files: ['agent.ts', 'retries.ts'],
    }),
  );
  await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project]);
  // It must exit by itself: a quick start that leaves the server's process running never ends.
  await run(process.execPath, [join(project, 'out/agent.js')], {
    cwd: project,
    env: { ...process.env, ERRATA_API_KEY: server.ingestKey },
    timeout: 60_000,
  });

  await server.catchUp();
  const { rows } = await sql<{ type: string; tool: string | null; outcome: string | null }>`
    SELECT type, tool_name AS tool, outcome FROM event
     WHERE tool_name IS DISTINCT FROM 'get-sum' ORDER BY start_time`.execute(server.db);
  expect(rows).toEqual([
    { type: 'AgentRunObserved', tool: null, outcome: null },
    { type: 'ToolCallObserved', tool: 'echo', outcome: 'ok' },
  ]);
}, 180_000);

it('`--require @errata/sdk/register` patches the MCP SDK the script itself loads, started from another directory through a symlink', async () => {
  // A plain CommonJS MCP client that knows nothing of Errata, and an @errata/sdk that is not in its tree.
  await writeFile(
    join(project, 'plain-client.cjs'),
    `const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
(async () => {
  const client = new Client({ name: 'plain', version: '1.0.0' });
  await client.connect(new StdioClientTransport({
    command: process.execPath,
    args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
    stderr: 'ignore',
  }));
  await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } });
  await client.close();
})();
`,
  );
  // As an npm bin link starts it: the symlink's own directory has no node_modules.
  const elsewhere = await mkdtemp(join(tmpdir(), 'errata-bin-'));
  await symlink(join(project, 'plain-client.cjs'), join(elsewhere, 'plain-client'));
  await run(
    process.execPath,
    ['--require', join(ROOT, 'libs/sdk/dist/register.js'), join(elsewhere, 'plain-client')],
    {
      cwd: elsewhere,
      env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: server.url, ERRATA_API_KEY: server.ingestKey },
      timeout: 60_000,
    },
  );
  await rm(elsewhere, { recursive: true, force: true });
  expect(await storedToolCalls()).toContainEqual({ tool: 'get-sum', outcome: 'ok' });
}, 120_000);
