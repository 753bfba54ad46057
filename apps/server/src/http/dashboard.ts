import { existsSync, readFileSync, type Stats } from 'node:fs';
import { extname, join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { chooseContentCoding, codedEntityTag, CONTENT_CODINGS, type ContentCoding } from './content-coding';

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

/** An asset's name as the build makes them: one segment, with an extension (so never `..`). */
const ASSET_NAME = /^\/[\w-]+(?:\.[\w-]+)+$/;

/** The file beside an asset holding it in a coding (apps/dashboard/build.mjs writes them). */
const CODED_FILE_SUFFIX: Record<ContentCoding, string> = { br: '.br', gzip: '.gz' };

/** `res.locals` key: the coding of the file the asset's request was pointed at. */
const ASSET_CODING = 'assetCoding';

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

  const assets = join(dir, 'assets');
  app.use('/assets/', pointAtCodedAsset(assets));
  app.useStaticAssets(assets, {
    prefix: '/assets/',
    index: false,
    immutable: true,
    maxAge: '365d',
    setHeaders: (res: Response, path: string, stat: Stats) => {
      res.setHeader('x-content-type-options', 'nosniff');
      describeCodedAsset(res, path, stat);
    },
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

/**
 * Points a request for an asset at its brotli or gzip file when the build wrote one and the request's
 * Accept-Encoding takes it; the static files' handler then sends that file as it sends any (Content-Length, HEAD,
 * conditional requests, 404 if it went meanwhile), and `describeCodedAsset` says what it is. A Range request gets the
 * file as it is: a range of the compressed bytes is valid HTTP but decoded by few clients, and one that joined
 * ranges of two codings would get neither.
 */
function pointAtCodedAsset(dir: string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !ASSET_NAME.test(req.path)) return next();
    const file = join(dir, req.path);
    const available = CONTENT_CODINGS.filter((coding) => existsSync(file + CODED_FILE_SUFFIX[coding]));
    if (available.length === 0) return next(); // small: sent as it is to everyone
    // Also on a Range request's answer: it is the same URL's, which a cache keys by Accept-Encoding.
    res.vary('Accept-Encoding');
    if (req.headers.range !== undefined) return next();
    const coding = chooseContentCoding(req.headers['accept-encoding'], available);
    if (coding === 'identity') return next();
    res.locals[ASSET_CODING] = coding;
    req.url = req.path + CODED_FILE_SUFFIX[coding] + req.url.slice(req.path.length);
    next();
  };
}

/**
 * A coded asset's headers, before the static files' handler sets its own where none is: its coding, the asset's
 * type (not the `.br` or `.gz` file's), and an ETag that names the coding (the file's size and time alone could
 * coincide with another coding's).
 */
function describeCodedAsset(res: Response, path: string, stat: Stats): void {
  const coding = res.locals[ASSET_CODING] as ContentCoding | undefined;
  if (coding === undefined || !path.endsWith(CODED_FILE_SUFFIX[coding])) return;
  res.setHeader('Content-Encoding', coding);
  res.type(extname(path.slice(0, -CODED_FILE_SUFFIX[coding].length)));
  const etag = `W/"${stat.size.toString(16)}-${stat.mtime.getTime().toString(16)}"`;
  res.setHeader('ETag', codedEntityTag(etag, coding));
}
