import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { serveCodedFiles } from './coded-files';

/** Where `npm run build` puts the dashboard (apps/dashboard/dist), from apps/server/{src,dist}/http. */
export const DASHBOARD_DIR = join(__dirname, '../../../dashboard/dist');

/** The dashboard's pages; each is answered with the app, which reads the path itself. */
const PAGE =
  /^\/(?:|retry-waste|misclassified|escalations|subagents|servers|findings(?:\/[^/]+)?|traces\/[^/]+)\/?$/;

/** Paths that belong to the service, not the dashboard: an unknown one there stays the API's JSON 404. */
const SERVICE =
  /^\/(?:api|v1|mcp|docs|docs-json|assets|healthz|readyz|metrics|favicon\.ico|robots\.txt)(?:\/|$)/;

/** A browser navigating to a page (not a script, an image, or an API client asking for JSON). */
const wantsPage = (req: Request): boolean => (req.headers.accept ?? '').includes('text/html');

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

const NOT_BUILT = `<!doctype html><html lang="en"><meta charset="utf-8"><title>Errata</title>
<h1>The dashboard has not been built</h1>
<p>Run <code>npm run build</code> (or start Errata with <code>npm start</code>, which builds it). The REST API under
<code>/api/v1</code> and its documentation at <a href="/docs">/docs</a> work without it.</p></html>`;

/**
 * Serves the dashboard at `/`: its pages (the same HTML, no caching) and its content-hashed assets under
 * `/assets/` (cached for good), each compressed with brotli or gzip (at build) for a client that takes it. The page
 * needs no key: every figure on it comes from the read-key API.
 */
export function mountDashboard(app: NestExpressApplication, dir: string = DASHBOARD_DIR): void {
  const indexFile = join(dir, 'index.html');
  let html: string | null = null;
  const page = (): string | null => (html ??= existsSync(indexFile) ? readFileSync(indexFile, 'utf8') : null);

  serveCodedFiles(app, '/assets/', join(dir, 'assets'), {
    immutable: true,
    maxAge: '365d',
    setHeaders: (res) => res.setHeader('x-content-type-options', 'nosniff'),
  });
  // An unknown path a browser navigates to gets the app too, with 404: it shows its own "Page not found", with
  // the navigation, rather than the API's JSON.
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const known = PAGE.test(req.path);
    if (!known && (SERVICE.test(req.path) || !wantsPage(req))) return next();
    const body = page();
    res.set({ ...SECURITY_HEADERS, 'cache-control': 'no-cache' });
    res
      .status(body === null ? 503 : known ? 200 : 404)
      .type('html')
      .send(body ?? NOT_BUILT);
  });
}
