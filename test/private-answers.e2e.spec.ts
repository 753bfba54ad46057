/** What the REST API and the MCP endpoint answer holds a project's data: no cache may keep it (DOMAIN.md §6). */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/server';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('pglite');
});
afterAll(() => server?.close());

it('answers the REST API and the MCP endpoint with no-store and nosniff, refusals included', async () => {
  const answers = [
    await fetch(`${server.url}/api/v1/servers`, { headers: { authorization: `Bearer ${server.readKey}` } }),
    await fetch(`${server.url}/api/v1/servers`),
    await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${server.readKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    }),
  ];
  expect(answers.map((answer) => answer.status)).toEqual([200, 401, 200]);
  for (const answer of answers) {
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
  }
});
