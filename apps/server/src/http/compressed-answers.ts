import { brotliCompress, constants, gzip } from 'node:zlib';
import type { NextFunction, Request, Response } from 'express';
import { chooseContentCoding, codedEntityTag, CONTENT_CODINGS, type ContentCoding } from './content-coding';

/**
 * The paths whose answers are compressed: the REST API, the OpenAPI document (`/docs-json`, `/docs-yaml`) and its
 * UI page, and the MCP endpoint's JSON answers (tools/list and a report's tool result are KiBs of JSON, to a client
 * that asked for br or gzip: Node's fetch, under the MCP SDK's client, does, and decodes them). Not the OTLP
 * receiver's (a few bytes, and an exporter may not decode an answer it did not expect coded), nor /healthz and
 * /readyz (a few bytes, read by probes).
 */
export const COMPRESSED_PATHS = ['/api', '/docs', '/docs-json', '/docs-yaml', '/mcp'];

/** Smaller answers are sent as they are: a few hundred bytes shrink by less than gzip's header and the work cost. */
const COMPRESS_MIN_BYTES = 1024;

/** JSON, YAML, HTML, JavaScript: text, which shrinks by 80 % or more. */
const COMPRESSIBLE = /^(?:text\/|application\/(?:javascript|(?:[\w.-]+\+)?json|(?:x-)?yaml)\s*(?:;|$))/i;

type End = (chunk?: unknown, encoding?: unknown, callback?: unknown) => Response;
type Write = (chunk: unknown, encoding?: unknown, callback?: unknown) => boolean;
type WriteHead = (status: number, ...rest: unknown[]) => Response;

/**
 * Express middleware: an answer written whole (`res.send`, `res.json`: Nest's replies and its exception filters',
 * a refusal's 503 or 413 alike) is compressed when the client accepts br or gzip and it is at least
 * COMPRESS_MIN_BYTES, with `Content-Encoding`, its Content-Length and an ETag of its own; every answer, compressed or
 * not, 304s included, has `Vary: Accept-Encoding`.
 * Every other header (Cache-Control: no-store, Retry-After, Connection: close) is left as it was. So is an answer
 * whose writer heads it itself (`writeHead`, then `write` and `end`: the MCP transport's) when its head says it is
 * whole: a Content-Length, of a compressible type; its head and body are held until its end for that. Any other
 * answer whose headers were sent before its end (a stream, SSE, a file) goes out as written, never held nor
 * compressed.
 *
 * Compressed on zlib's thread pool, not the event loop: a large report takes milliseconds to compress, which ingest
 * would otherwise wait for.
 */
export function compressAnswers(request: Request, response: Response, next: NextFunction): void {
  // Every answer here, compressed or not (too small, a stream, a 304): another at this URL may be, so caches must key
  // on Accept-Encoding. Said at once, not at the end: a 304 must carry the Vary its 200 has (RFC 9110 §15.4.5), and
  // Express and the static files' handler take its Content-Type off before its end, so whether its 200 would have
  // been compressible can no longer be told there.
  response.vary('Accept-Encoding');
  const end = response.end as unknown as End;
  const write = response.write as unknown as Write;
  const writeHead = response.writeHead as unknown as WriteHead;
  /** The answer's ETag before it was coded ahead of Express's freshness check; null while it is not. */
  let identityTag: string | null = null;
  // Express answers 304 when the request's If-None-Match names the ETag res.send has just set: the identity's. A
  // compressed answer goes with its own (codedEntityTag), which is what a cache revalidates with, and which never
  // matched: every revalidation was a full 200. So an answer that will be compressed has its ETag coded before
  // Express compares, and its 304 says that tag.
  const expressFresh = freshnessCheck(request);
  Object.defineProperty(request, 'fresh', {
    configurable: true,
    enumerable: true,
    get: () => {
      const etag = response.getHeader('etag');
      const coding = codingFor(request, response, undefined, undefined);
      if (identityTag === null && coding !== 'identity' && typeof etag === 'string') {
        identityTag = etag;
        response.setHeader('ETag', codedEntityTag(etag, coding));
      }
      return expressFresh.call(request);
    },
  });
  /** The body written so far of an answer held to be compressed whole; null when none is held. */
  let held: Buffer[] | null = null;
  const holdingWriteHead: WriteHead = (status, ...rest) => {
    response.writeHead = writeHead as unknown as Response['writeHead']; // once
    const [headers] = rest;
    if (rest.length !== 1 || !holdsWhole(request, status, headers))
      return writeHead.call(response, status, ...rest);
    // Set, not sent: the end compresses the body and sends them with its coding.
    response.statusCode = status;
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value as string);
    held = [];
    const holdingWrite: Write = (chunk, encoding, callback) => {
      if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined];
      held!.push(bytesOf(chunk, encoding));
      if (typeof callback === 'function') process.nextTick(callback as () => void);
      return true;
    };
    response.write = holdingWrite as unknown as Response['write'];
    return response;
  };
  const compressingEnd: End = (chunk, encoding, callback) => {
    response.end = end as unknown as Response['end']; // once: whatever follows is written as it comes
    if (typeof chunk === 'function') [callback, chunk] = [chunk, undefined];
    else if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined];
    if (held !== null) {
      response.write = write as unknown as Response['write'];
      if (chunk !== undefined && chunk !== null) held.push(bytesOf(chunk, encoding));
      [chunk, encoding] = [Buffer.concat(held), undefined];
      held = null;
    }
    const coding = codingFor(request, response, chunk, encoding);
    if (coding === 'identity') return end.call(response, chunk, encoding, callback);
    if (chunk === undefined || chunk === null) {
      // HEAD: the headers the GET would have, but its coded length is not known without its body.
      setCodedHeaders(response, coding, null, identityTag === null);
      return end.call(response, undefined, undefined, callback);
    }
    const body = bytesOf(chunk, encoding);
    compress(coding, body, (error, coded) => {
      // The client left meanwhile, or something answered in between (nothing does): nothing more to send.
      if (response.destroyed || response.headersSent) return;
      if (error !== null) {
        if (identityTag !== null) response.setHeader('ETag', identityTag);
        return void end.call(response, body, undefined, callback);
      }
      setCodedHeaders(response, coding, coded.length, identityTag === null);
      end.call(response, coded, undefined, callback);
    });
    return response;
  };
  response.end = compressingEnd as unknown as Response['end'];
  response.writeHead = holdingWriteHead as unknown as Response['writeHead'];
  next();
}

/**
 * Whether an answer headed with `writeHead(status, headers)` is held to be compressed whole: one that will be (see
 * `codingFor`) and says its length, so it is whole, not a stream (SSE has no length, and is never held).
 */
function holdsWhole(request: Request, status: number, headers: unknown): headers is Record<string, unknown> {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return false;
  const header = (name: string): string | undefined => {
    const found = Object.entries(headers).find(([key]) => key.toLowerCase() === name);
    return found === undefined ? undefined : String(found[1] as string);
  };
  if (status < 200 || status === 204 || status === 304) return false;
  if (header('content-encoding') !== undefined || !COMPRESSIBLE.test(header('content-type') ?? ''))
    return false;
  if (/\bno-transform\b/i.test(header('cache-control') ?? '')) return false;
  const length = Number(header('content-length'));
  return (
    Number.isSafeInteger(length) &&
    chooseContentCoding(
      request.headers['accept-encoding'],
      length >= COMPRESS_MIN_BYTES ? CONTENT_CODINGS : [],
    ) !== 'identity'
  );
}

function bytesOf(chunk: unknown, encoding: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
  return Buffer.from(chunk as string, (encoding as BufferEncoding | undefined) ?? 'utf8');
}

/** The coding this answer goes in; identity for what is not to be compressed. */
function codingFor(
  request: Request,
  response: Response,
  chunk: unknown,
  encoding: unknown,
): ContentCoding | 'identity' {
  const status = response.statusCode;
  if (response.headersSent || status < 200 || status === 204 || status === 304) return 'identity';
  if (response.hasHeader('content-encoding')) return 'identity';
  const type = response.getHeader('content-type');
  if (typeof type !== 'string' || !COMPRESSIBLE.test(type)) return 'identity';
  // A proxy or client that asked for the bytes as they are (RFC 9111 §5.2.2.6).
  if (/\bno-transform\b/i.test(String(response.getHeader('cache-control') ?? ''))) return 'identity';
  const size =
    typeof chunk === 'string'
      ? Buffer.byteLength(chunk, (encoding as BufferEncoding | undefined) ?? 'utf8')
      : chunk instanceof Uint8Array
        ? chunk.length
        : // No body given: a HEAD's, or Express's freshness check before the body is sent; what res.send measured.
          Number(response.getHeader('content-length') ?? 0);
  return chooseContentCoding(
    request.headers['accept-encoding'],
    size >= COMPRESS_MIN_BYTES ? CONTENT_CODINGS : [],
  );
}

/** `codeTag`: false when the ETag was coded already, ahead of Express's freshness check. */
function setCodedHeaders(
  response: Response,
  coding: ContentCoding,
  length: number | null,
  codeTag: boolean,
): void {
  response.setHeader('Content-Encoding', coding);
  if (length === null) response.removeHeader('Content-Length');
  else response.setHeader('Content-Length', length);
  const etag = response.getHeader('etag');
  if (codeTag && typeof etag === 'string') response.setHeader('ETag', codedEntityTag(etag, coding));
}

function compress(
  coding: ContentCoding,
  body: Buffer,
  done: (error: Error | null, coded: Buffer) => void,
): void {
  if (coding === 'gzip') return gzip(body, { level: 6 }, done);
  // Quality 5, not 11 (the dashboard's files, compressed once at build): 11 takes some 50 times as long, for a tenth
  // less; 5 is still smaller than gzip's best.
  brotliCompress(
    body,
    {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 5,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    },
    done,
  );
}

/** Express's `req.fresh` getter, found once: every request has the same prototype chain. */
let expressFreshness: (() => boolean) | null = null;

/** Express's `req.fresh` (RFC 9110 §13.1.2, against the answer's ETag and Last-Modified), from its request prototype. */
function freshnessCheck(request: Request): () => boolean {
  if (expressFreshness !== null) return expressFreshness;
  for (
    let proto: object | null = Object.getPrototypeOf(request);
    proto !== null;
    proto = Object.getPrototypeOf(proto)
  ) {
    const getter = Object.getOwnPropertyDescriptor(proto, 'fresh')?.get;
    if (getter !== undefined) return (expressFreshness = getter as () => boolean);
  }
  throw new Error("Express's request has no `fresh`");
}
