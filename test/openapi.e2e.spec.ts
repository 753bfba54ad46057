/** The OpenAPI document at /docs-json and the Swagger UI at /docs describe every REST endpoint (issue 4). */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchChromium } from './support/browser';
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
      {
        get?: {
          parameters?: { name: string; required?: boolean; schema?: Record<string, unknown> }[];
          security?: unknown[];
        };
      }
    >;
    components: { securitySchemes: Record<string, { scheme: string; bearerFormat?: string }> };
  };
  expect(document.openapi).toMatch(/^3\./);
  for (const scheme of ['read-key', 'admin-key', 'ingest-key'])
    expect(document.components.securitySchemes[scheme]).toMatchObject({
      scheme: 'bearer',
      bearerFormat: 'opaque key', // not Nest's default, JWT
    });
  // A date alone is taken, so `from` and `to` are no `format: date-time`.
  const from = document.paths['/api/v1/reports/retry-waste']?.get?.parameters?.find((p) => p.name === 'from');
  expect(from).toMatchObject({ schema: { type: 'string' } });
  expect(from).not.toHaveProperty('schema.format');
  // What the API does where DOMAIN.md §8 names no default: a report's window is the whole history, a series ends
  // now, and retry waste is grouped by category.
  const parameter = (path: string, name: string) =>
    document.paths[path]?.get?.parameters?.find((p) => p.name === name) as
      { description?: string } | undefined;
  expect(parameter('/api/v1/reports/retry-waste', 'from')?.description).toMatch(/without it, .*earliest/i);
  expect(parameter('/api/v1/reports/retry-waste', 'to')?.description).toMatch(/without it, .*no end/i);
  expect(parameter('/api/v1/reports/timeseries', 'to')?.description).toMatch(/defaults to now/i);
  for (const path of ['/api/v1/reports/retry-waste', '/api/v1/reports/timeseries']) {
    expect(parameter(path, 'groupBy'), path).toMatchObject({
      schema: { enum: ['category', 'server', 'tool'], default: 'category' },
    });
  }
  const expected: Record<string, string[]> = {
    '/api/v1/reports/retry-waste': ['from', 'to', 'server', 'tool', 'agent', 'groupBy', 'limit', 'offset'],
    '/api/v1/reports/escalations': ['from', 'to', 'server', 'tool', 'agent'],
    '/api/v1/reports/misclassified-results': ['from', 'to', 'server', 'tool', 'agent', 'limit', 'offset'],
    '/api/v1/reports/subagent-coverage': ['from', 'to', 'server', 'tool', 'agent'],
    '/api/v1/findings': ['from', 'to', 'server', 'tool', 'agent', 'rule', 'limit', 'offset'],
    '/api/v1/findings/{id}': ['id', 'from', 'to', 'server', 'tool', 'agent'],
    '/api/v1/servers': [
      'from',
      'to',
      'server',
      'tool',
      'agent',
      'limit',
      'offset',
      'toolLimit',
      'toolOffset',
    ],
    '/api/v1/names': ['from', 'to', 'server', 'search', 'limit'],
    '/api/v1/reports/timeseries': ['from', 'to', 'server', 'tool', 'agent', 'step', 'groupBy', 'groupLimit'],
    '/api/v1/traces/{traceId}': ['traceId', 'limit', 'run', 'after', 'before', 'span', 'runOffset'],
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

it('serves the Swagger UI at /docs, which no other site may frame (a key is pasted into it)', async () => {
  const response = await fetch(`${server.url}/docs`);
  expect(response.status).toBe(200);
  expect(await response.text()).toContain('swagger-ui');
  expect(response.headers.get('x-frame-options')).toBe('DENY');
  expect(response.headers.get('content-security-policy')).toBe("frame-ancestors 'none'");
});

it('documents fix delivery as admin-key endpoints with the owner registration body, and OTLP ingest as 200 with an ingest key', async () => {
  type Operation = { security?: unknown[]; responses?: Record<string, unknown>; requestBody?: unknown };
  const document = (await (await fetch(`${server.url}/docs-json`)).json()) as {
    paths: Record<string, Record<string, Operation>>;
  };
  const adminPaths = Object.entries(document.paths).filter(([path]) =>
    /^\/api\/v1\/(owners|fixes|deliveries)|\/acknowledge$/.test(path),
  );
  expect(adminPaths.length).toBeGreaterThanOrEqual(8);
  for (const [path, item] of adminPaths)
    for (const [method, operation] of Object.entries(item))
      expect(operation.security, `${method} ${path}`).toEqual([{ 'admin-key': [] }]);
  expect(document.paths['/api/v1/owners']!['post']!.requestBody).toMatchObject({
    content: { 'application/json': { schema: { required: ['server', 'webhookUrl'] } } },
  });
  const ingest = document.paths['/v1/traces']!['post']!;
  // Success and every failure OTLP/HTTP answers (their bodies: test/openapi-contract.e2e.spec.ts).
  expect(Object.keys(ingest.responses!)).toEqual(['200', '400', '401', '403', '408', '413', '415', '503']);
  expect(ingest.security).toEqual([{ 'ingest-key': [] }]);
  // Its body, in both encodings OTLP/HTTP allows
  expect(Object.keys((ingest.requestBody as { content: object }).content).sort()).toEqual([
    'application/json',
    'application/x-protobuf',
  ]);
});

it('shows Errata’s own operations at /docs/?url=…, /docs?url=… and /docs/index.html, loading no spec the URL names', async () => {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    const foreign = encodeURIComponent('https://example.invalid/x.json');
    // Nest's page took `/docs/?…` and `/docs/index.html` for `/docs`, asked for /docs/docs/… and stayed blank.
    for (const path of [`/docs/?url=${foreign}`, `/docs?url=${foreign}`, '/docs/index.html']) {
      await page.goto(`${server.url}${path}`);
      await page
        .locator('.opblock-summary-path', { hasText: '/api/v1/reports/retry-waste' })
        .first()
        .waitFor();
      expect(await page.locator('.info .title').first().textContent(), path).toContain('Errata REST API');
    }
    expect(requested.filter((url) => new URL(url).hostname === 'example.invalid')).toEqual([]);
  } finally {
    await browser.close();
  }
}, 60_000);
