import { connect } from 'node:net';

export interface EndlessUploadOutcome {
  /** The answer's status line and headers, as they came. */
  readonly head: string;
  /** Body bytes the client got to write before the server closed the connection (or it gave up, at `cap`). */
  readonly written: number;
  /** The server closed the connection before `cap` bytes were written. */
  readonly closed: boolean;
}

const CHUNK = Buffer.alloc(64 * 1024, 7);
const CHUNK_FRAMED = Buffer.concat([
  Buffer.from(`${CHUNK.length.toString(16)}\r\n`),
  CHUNK,
  Buffer.from('\r\n'),
]);

/**
 * A client on a plain socket that sends a POST's body for as long as the server reads it, up to `cap` bytes: with a
 * `Content-Length` of `declared`, or chunked (`declared` null). Node's HTTP client, writing a body piece by piece,
 * stalls once it has its answer; someone making the server read what it does not want would not.
 */
export function endlessUpload(
  url: string,
  headers: Record<string, string>,
  declared: number | null,
  cap: number,
): Promise<EndlessUploadOutcome> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    let written = 0;
    let closed = false;
    const done = () => resolve({ head: received.split('\r\n\r\n')[0] ?? '', written, closed });
    socket.on('data', (data: Buffer) => (received += data.toString('latin1')));
    socket.on('error', () => {}); // the server closing under the upload: EPIPE or ECONNRESET
    socket.on('close', () => {
      closed = written < cap;
      done();
    });
    const framing =
      declared === null ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(declared) };
    const lines = Object.entries({ host: `${hostname}:${port}`, ...framing, ...headers }).map(
      ([name, value]) => `${name}: ${value}\r\n`,
    );
    socket.write(`POST ${pathname} HTTP/1.1\r\n${lines.join('')}\r\n`);
    const send = () => {
      while (!socket.destroyed && written < cap) {
        written += CHUNK.length;
        if (!socket.write(declared === null ? CHUNK_FRAMED : CHUNK)) return void socket.once('drain', send);
      }
      if (!socket.destroyed) socket.destroy();
    };
    send();
  });
}
