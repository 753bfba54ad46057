import { request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';

export interface ContinueUploadOutcome {
  readonly status: number;
  /** The server sent `100 Continue`, and so the body was sent. */
  readonly continued: boolean;
  readonly headers: IncomingHttpHeaders;
}

/**
 * POSTs `body` to `url` as a client that asks `Expect: 100-continue` does: the headers first, the body only once the
 * server says `100 Continue`. Resolves with the answer, whether the body was sent or not.
 */
export function uploadAwaitingContinue(
  url: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<ContinueUploadOutcome> {
  return new Promise((resolve, reject) => {
    let continued = false;
    const upload = request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': body.length, expect: '100-continue' },
    });
    upload.on('continue', () => {
      continued = true;
      upload.end(body);
    });
    upload.on('response', (response: IncomingMessage) => {
      response.resume();
      resolve({ status: response.statusCode!, continued, headers: response.headers });
      upload.destroy();
    });
    upload.on('error', reject);
    upload.flushHeaders();
  });
}
