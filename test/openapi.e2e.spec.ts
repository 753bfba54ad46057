/** The OpenAPI document at /docs-json and the Swagger UI at /docs describe every REST endpoint (issue 4). */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/server';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('pglite');
});
afterAll(() => server?.close());

it('documents every report, findings and servers endpoint with its parameters and the read-key scheme', async () => {
  const response = await fetch(`${server.url}/docs-json`);
  expect(response.status).toBe(200);
  const document = (await response.json()) as {
    openapi: string;
    paths: Record<
      string,
      { get?: { parameters?: { name: string; required?: boolean }[]; security?: unknown[] } }
    >;
    components: { securitySchemes: Record<string, { scheme: string }> };
  };
  expect(document.openapi).toMatch(/^3\./);
  expect(document.components.securitySchemes['read-key']).toMatchObject({ scheme: 'bearer' });
  const expected: Record<string, string[]> = {
    '/api/v1/reports/retry-waste': ['from', 'to', 'server', 'tool', 'agent', 'groupBy'],
    '/api/v1/reports/escalations': ['from', 'to', 'server', 'tool', 'agent'],
    '/api/v1/reports/misclassified-results': ['from', 'to', 'server', 'tool', 'agent'],
    '/api/v1/reports/subagent-coverage': ['from', 'to', 'server', 'tool', 'agent'],
    '/api/v1/findings': ['from', 'to', 'server', 'tool', 'agent', 'rule', 'limit', 'offset'],
    '/api/v1/findings/{id}': ['id', 'from', 'to', 'server', 'tool', 'agent'],
    '/api/v1/servers': ['from', 'to', 'server', 'tool', 'agent'],
    '/api/v1/reports/timeseries': ['from', 'to', 'server', 'tool', 'agent', 'step', 'groupBy'],
    '/api/v1/traces/{traceId}': ['traceId'],
  };
  for (const [path, parameters] of Object.entries(expected)) {
    const operation = document.paths[path]?.get;
    expect(operation, path).toBeDefined();
    expect(operation!.parameters!.map((p) => p.name).sort(), path).toEqual([...parameters].sort());
    expect(operation!.security, path).toEqual([{ 'read-key': [] }]);
  }
  // Required as the API requires them: a series needs `from`, a path parameter names the resource; the rest is optional.
  const required = Object.entries(document.paths).flatMap(([path, item]) =>
    (item.get?.parameters ?? []).filter((p) => p.required === true).map((p) => `${path} ${p.name}`),
  );
  expect(required.sort()).toEqual(
    [
      '/api/v1/reports/timeseries from',
      '/api/v1/findings/{id} id',
      '/api/v1/fixes/{findingId} findingId',
      '/api/v1/traces/{traceId} traceId',
    ].sort(),
  );
});

it('serves the Swagger UI at /docs', async () => {
  const response = await fetch(`${server.url}/docs`);
  expect(response.status).toBe(200);
  expect(await response.text()).toContain('swagger-ui');
});
