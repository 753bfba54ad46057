/**
 * DOMAIN.md §6: "Arguments are hashed, never stored raw unless a project opts in." The opt-in is a project setting
 * (`projects settings --store-arguments on`); with it, the raw arguments a span carries are kept redacted and cut, and
 * shown in the trace's timeline. Real PostgreSQL, the built CLI, OTLP ingest.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ProjectRepository } from '../apps/server/src/repositories/project.repository';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { AgentTrace } from './support/agent-spans';
import { launchChromium } from './support/browser';
import { runCli } from './support/cli';
import { sendSpans, startTestServer, type TestServer } from './support/server';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('postgres');
});
afterAll(() => server?.close());

const settings = (...args: string[]) =>
  runCli(server.databaseUrl!, 'projects', 'settings', '--project', 'default', ...args);

/** Sends one call carrying raw arguments with a fresh ingest key (a key in use learns of a change within 5 s). */
async function callWithArguments(): Promise<{ traceId: string; arguments: string | null }> {
  const project = await server.app.get(ProjectRepository).ensureProject('default');
  const { key } = await server.app.get(ApiKeyService).create(project.id, 'ingest', 'cli');
  const at = Date.now() - 60_000;
  const spans = new AgentTrace().run('agent', at, [
    {
      tool: 'lookup_order',
      startMs: at + 1,
      durationMs: 5,
      extra: {
        'gen_ai.tool.call.arguments': `{"orderId":"#${randomBytes(2).toString('hex')}","password":"hunter2"}`,
      },
    },
  ]);
  expect(await sendSpans(server.url, key, spans)).toBe(200);
  await server.catchUp();
  const traceId = spans[0]!.spanContext().traceId;
  const response = await fetch(`${server.url}/api/v1/traces/${traceId}`, {
    headers: { authorization: `Bearer ${server.readKey}` },
  });
  const { items } = (await response.json()) as { items: { kind: string; arguments: string | null }[] };
  return { traceId, arguments: items.find((item) => item.kind === 'call')!.arguments };
}

it('keeps raw arguments only while the project stores them, redacted, and shows them in the timeline', async () => {
  // Given the default: only the hash and size of arguments are kept
  expect((await settings()).stdout).toBe(
    'project "default"\nstore-arguments off: only a hash and the size of tool calls\' arguments are kept (any kept ' +
      'before are not shown, and leave with their traces: events prune)\n',
  );
  expect((await callWithArguments()).arguments).toBeNull();

  // When the project opts in, a call's arguments are kept, redacted
  const on = await settings('--store-arguments', 'on');
  expect(on.code).toBe(0);
  expect(on.stdout).toMatch(/store-arguments on: tool calls' raw arguments are kept, redacted and cut/);
  const stored = await callWithArguments();
  expect(stored.arguments).toMatch(/^\{"orderId":"#[0-9a-f]{4}","password":"\[REDACTED:password\]"\}$/);
  // and the dashboard's run timeline shows them with the call
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${server.url}/`);
    await page.getByLabel('Read key').fill(server.readKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page.goto(`${server.url}/traces/${stored.traceId}`);
    await page.getByRole('heading', { name: /^Run timeline/, level: 1 }).waitFor();
    expect(await page.locator('[data-arguments]').textContent()).toBe(stored.arguments);
  } finally {
    await browser.close();
  }

  // And when it opts out again, the next calls keep none, and those kept before are no longer shown
  expect((await settings('--store-arguments', 'off')).code).toBe(0);
  expect((await callWithArguments()).arguments).toBeNull();
  const earlier = await fetch(`${server.url}/api/v1/traces/${stored.traceId}`, {
    headers: { authorization: `Bearer ${server.readKey}` },
  });
  const { items } = (await earlier.json()) as { items: { kind: string; arguments: string | null }[] };
  expect(items.find((item) => item.kind === 'call')!.arguments).toBeNull();
});

it('refuses a setting value it does not know', async () => {
  const bad = await settings('--store-arguments', 'yes');
  expect(bad.code).toBe(2);
  expect(bad.stderr).toBe('errata: --store-arguments must be on or off\n');
});
