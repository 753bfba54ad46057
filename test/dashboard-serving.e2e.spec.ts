/**
 * How the service serves the dashboard: its pages at their paths (one HTML document, not cached, with a strict
 * content security policy), its content-hashed assets under /assets/ (cached for good), and nothing else changed.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_DIR } from '../apps/server/src/http/dashboard';
import { startTestServer, type TestServer } from './support/server';

describe('the dashboard, as served', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('postgres');
  });
  afterAll(() => server?.close());

  it('answers every page path with the app, uncached, under a strict CSP; no key is needed for the page itself', async () => {
    for (const path of [
      '/',
      '/retry-waste',
      '/misclassified',
      '/escalations',
      '/subagents',
      '/servers',
      '/findings',
      '/findings/0123456789abcdef0123',
      '/traces/0af7651916cd43dd8448eb211c80319c',
    ]) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      const html = await response.text();
      expect(html).toMatch(/<script type="module" src="\/assets\/main-[A-Z0-9]+\.js"><\/script>/);
    }
  });

  it('serves the built assets with long-lived caching, and 404 for an asset that is not there', async () => {
    const script = readdirSync(join(DASHBOARD_DIR, 'assets')).find((name) => name.endsWith('.js'))!;
    const response = await fetch(`${server.url}/assets/${script}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/javascript/);
    expect(response.headers.get('cache-control')).toContain('immutable');
    expect((await response.text()).length).toBeGreaterThan(100_000);
    expect((await fetch(`${server.url}/assets/main-NOTTHERE.js`)).status).toBe(404);
  });

  it('answers an unknown path a browser navigates to with the app (404), which says the page is not found', async () => {
    const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
    for (const path of ['/nope', '/findings/a/b', '/servers/x']) {
      const response = await fetch(`${server.url}${path}`, { headers: browser });
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(await response.text()).toMatch(/<script type="module" src="\/assets\/main-[A-Z0-9]+\.js">/);
    }
    for (const path of ['/api/v1/nope', '/v1/nope', '/mcp/nope', '/docs-json/nope', '/assets/nope.js']) {
      const response = await fetch(`${server.url}${path}`, { headers: browser });
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-type'), path).not.toMatch(/^text\/html/);
    }
  });

  it('leaves the API, OTLP and unknown paths as they were', async () => {
    expect((await fetch(`${server.url}/api/v1/reports/retry-waste`)).status).toBe(401);
    expect((await fetch(`${server.url}/v1/traces`, { method: 'POST' })).status).toBe(401);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/no-such-page`)).status).toBe(404);
    expect((await fetch(`${server.url}/findings/a/b`)).status).toBe(404);
    expect((await fetch(`${server.url}/`, { method: 'POST' })).status).toBe(404);
  });
});
