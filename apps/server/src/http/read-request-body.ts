import type { IncomingMessage } from 'node:http';
import { createGunzip } from 'node:zlib';

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body exceeds ${limit} bytes (measured after decompression)`);
  }
}
export class UnsupportedEncodingError extends Error {
  constructor(encoding: string) {
    super(`unsupported Content-Encoding "${encoding}"; send gzip or identity`);
  }
}
export class BadCompressionError extends Error {
  constructor(cause: string) {
    super(`request body is not valid gzip: ${cause}`);
  }
}
export class RequestAbortedError extends Error {
  constructor() {
    super('the client closed the connection before the whole body arrived');
  }
}
export class BodyTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`the request body did not arrive within ${timeoutMs} ms`);
  }
}

/** Past the limit the rest of the upload is read and discarded (so the client sees the 413), up to this much. */
const DISCARD_FACTOR = 4;

/** The most of an unwanted body read and thrown away, for a route that takes up to `limit` bytes. */
export function discardBound(limit: number): number {
  return limit * DISCARD_FACTOR;
}

/**
 * Reads the whole body, inflating gzip on the fly, and stops keeping bytes once `limit` is exceeded: the limit
 * applies to the decompressed size, so a small gzip bomb is refused without inflating it all. Settles however the
 * request ends, also when the client goes away mid-body (RequestAbortedError), so the caller can free what it holds,
 * and after `timeoutMs` at the latest (BodyTimeoutError).
 */
export function readRequestBody(req: IncomingMessage, limit: number, timeoutMs?: number): Promise<Buffer> {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toString().trim().toLowerCase();
  if (encoding !== 'gzip' && encoding !== 'identity' && encoding !== '') {
    return Promise.reject(new UnsupportedEncodingError(encoding));
  }
  const declared = Number(req.headers['content-length']);
  if (encoding !== 'gzip' && Number.isFinite(declared) && declared > limit) {
    return discardThenReject(req, new BodyTooLargeError(limit), limit);
  }

  let deadline: NodeJS.Timeout | undefined;
  const reading = new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    const source = encoding === 'gzip' ? req.pipe(createGunzip()) : req;

    const stop = () => {
      failed = true;
      chunks.length = 0;
      if (source !== req) (source as ReturnType<typeof createGunzip>).destroy();
    };
    const fail = (error: Error) => {
      if (failed) return;
      stop();
      discardThenReject(req, error, limit).catch(reject);
    };
    // The inflating stream is not told when the request dies: without this a gzip upload cut off mid-body would
    // never settle.
    const abandon = () => {
      if (failed || req.complete) return;
      stop();
      reject(new RequestAbortedError());
    };
    req.on('error', abandon);
    req.once('close', abandon);
    // A body that trickles in (or stalls) would hold its caller's place as long as the client likes.
    if (timeoutMs !== undefined) {
      deadline = setTimeout(() => {
        stop();
        reject(new BodyTimeoutError(timeoutMs));
      }, timeoutMs);
    }

    source.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) fail(new BodyTooLargeError(limit));
      else chunks.push(chunk);
    });
    if (source !== req) source.on('error', (error: Error) => fail(new BadCompressionError(error.message)));
    source.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks, size));
    });
  });
  return reading.finally(() => clearTimeout(deadline));
}

function discardThenReject(req: IncomingMessage, error: Error, limit: number): Promise<never> {
  return new Promise((_, reject) => {
    if (req.readableEnded || req.destroyed) return reject(error);
    let discarded = 0;
    req.unpipe();
    req.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > discardBound(limit)) {
        req.removeAllListeners('data');
        req.pause();
        reject(error);
      }
    });
    req.once('end', () => reject(error));
    req.once('error', () => reject(error));
    req.once('close', () => reject(error));
    req.resume();
  });
}
