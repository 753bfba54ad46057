import { existsSync, type Stats } from 'node:fs';
import { extname, join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { chooseContentCoding, codedEntityTag, CONTENT_CODINGS, type ContentCoding } from './content-coding';

/** The file beside a static file holding it in a coding (apps/dashboard/build.mjs writes them). */
const CODED_FILE_SUFFIX: Record<ContentCoding, string> = { br: '.br', gzip: '.gz' };

/** A file's name as the build makes them: one segment, with an extension (so never `..`). */
const FILE_NAME = /^\/[\w-]+(?:\.[\w-]+)+$/;

/** `res.locals` key: the coding of the file the request was pointed at. */
const FILE_CODING = 'codedFileCoding';

/** What `serveCodedFiles` passes on to the static files' handler (express.static's options). */
export interface StaticFileOptions {
  readonly immutable?: boolean;
  readonly maxAge?: string;
  /** Headers of the answer's own, set before the coded file's. */
  readonly setHeaders?: (res: Response) => void;
}

/**
 * Serves the files of `dir` under `prefix`, each in the brotli or gzip file the build wrote beside it when the
 * request's Accept-Encoding takes one (`.br`, `.gz`), with `Content-Encoding`, `Vary: Accept-Encoding` and an ETag per
 * coding; a request for a file not there goes on to the next handler (another directory, a route, a 404).
 */
export function serveCodedFiles(
  app: NestExpressApplication,
  prefix: string,
  dir: string,
  options: StaticFileOptions = {},
): void {
  const { setHeaders, ...caching } = options;
  app.use(prefix, pointAtCodedFile(dir));
  app.useStaticAssets(dir, {
    ...caching,
    prefix,
    index: false,
    // A directory (the prefix itself) is not a file here: it goes on, where a route may answer it.
    redirect: false,
    setHeaders: (res: Response, path: string, stat: Stats) => {
      setHeaders?.(res);
      describeCodedFile(res, path, stat);
    },
  });
}

/**
 * Points a request for a file at its brotli or gzip file when the build wrote one and the request's
 * Accept-Encoding takes it; the static files' handler then sends that file as it sends any (Content-Length, HEAD,
 * conditional requests, 404 if it went meanwhile), and `describeCodedFile` says what it is. A Range request gets the
 * file as it is: a range of the compressed bytes is valid HTTP but decoded by few clients, and one that joined
 * ranges of two codings would get neither.
 */
function pointAtCodedFile(dir: string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !FILE_NAME.test(req.path)) return next();
    const file = join(dir, req.path);
    const available = CONTENT_CODINGS.filter((coding) => existsSync(file + CODED_FILE_SUFFIX[coding]));
    if (available.length === 0) return next(); // small: sent as it is to everyone
    // Also on a Range request's answer: it is the same URL's, which a cache keys by Accept-Encoding.
    res.vary('Accept-Encoding');
    if (req.headers.range !== undefined) return next();
    const coding = chooseContentCoding(req.headers['accept-encoding'], available);
    if (coding === 'identity') return next();
    res.locals[FILE_CODING] = coding;
    req.url = req.path + CODED_FILE_SUFFIX[coding] + req.url.slice(req.path.length);
    next();
  };
}

/**
 * A coded file's headers, before the static files' handler sets its own where none is: its coding, the file's
 * type (not the `.br` or `.gz` file's), and an ETag that names the coding (the file's size and time alone could
 * coincide with another coding's).
 */
function describeCodedFile(res: Response, path: string, stat: Stats): void {
  const coding = res.locals[FILE_CODING] as ContentCoding | undefined;
  if (coding === undefined || !path.endsWith(CODED_FILE_SUFFIX[coding])) return;
  res.setHeader('Content-Encoding', coding);
  res.type(extname(path.slice(0, -CODED_FILE_SUFFIX[coding].length)));
  const etag = `W/"${stat.size.toString(16)}-${stat.mtime.getTime().toString(16)}"`;
  res.setHeader('ETag', codedEntityTag(etag, coding));
}
