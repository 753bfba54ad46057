import { execFile } from 'node:child_process';
import { Agent, request, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadAwaitingContinue } from './support/continue-upload';
import { endlessUpload } from './support/endless-upload';
import { startTestServer, type TestServer } from './support/server';

const run = promisify(execFile);
const UPLOADER = join(__dirname, 'fixtures/upload-outcome.cjs');
const MiB = 1024 * 1024;

describe('an OTLP upload refused for its key gets the 401/403, not a reset connection', () => {
  let server: TestServer;
  beforeAll(async () => {
    // At most 16 MiB of an unwanted body is read (four times the limit, as past the limit)
    server = await startTestServer('postgres', { ERRATA_MAX_BODY_BYTES: String(4 * MiB) });
  });
  afterAll(() => server.close());

  it('answers an upload waiting for 100 Continue with the 401/403 instead, so it never sends its body', async () => {
    const body = Buffer.alloc(30 * 1024 * 1024, 7);
    const answerTo = async (authorization: string | null) => {
      const { status, continued, headers } = await uploadAwaitingContinue(
        `${server.url}/v1/traces`,
        {
          'content-type': 'application/x-protobuf',
          ...(authorization === null ? {} : { authorization }),
        },
        body,
      );
      return { status, continued, authenticate: headers['www-authenticate'], connection: headers.connection };
    };
    expect(await answerTo(null)).toEqual({
      status: 401,
      continued: false,
      authenticate: 'Bearer realm="errata"',
      connection: 'close', // the body it did not send would be read as the next request
    });
    expect(await answerTo('Bearer not-a-key')).toEqual({
      status: 401,
      continued: false,
      authenticate: 'Bearer realm="errata", error="invalid_token"',
      connection: 'close',
    });
    expect(await answerTo(`Bearer ${server.readKey}`)).toMatchObject({
      status: 403,
      continued: false,
      connection: 'close',
    });
  }, 60_000);

  it('answers uploads sent at once, without Expect, with the 401/403 after their bodies, not with a reset', async () => {
    // A client in another process sending 12 MiB bodies; closing the connection on them at once reset each (EPIPE)
    // before it read any answer.
    const outcomes = async (key: string) =>
      JSON.parse((await run(process.execPath, [UPLOADER, server.url, key, '2', '12'])).stdout) as string[];
    expect(await outcomes('-')).toEqual(['401 null', '401 null']);
    expect(await outcomes('not-a-key')).toEqual(['401 null', '401 null']);
    expect(await outcomes(server.readKey)).toEqual(['403 null', '403 null']);
  }, 60_000);

  it('keeps the connection of a refused upload with a small body, declared or chunked, for the next request', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const post = (body: Buffer, chunked: boolean) =>
      new Promise<{ status: number; connection: unknown; reused: boolean }>((resolve, reject) => {
        const upload = request(`${server.url}/v1/traces`, {
          agent,
          method: 'POST',
          headers: {
            'content-type': 'application/x-protobuf',
            ...(chunked ? {} : { 'content-length': body.length }),
          },
        });
        upload.on('response', (response: IncomingMessage) =>
          response.resume().on('end', () =>
            resolve({
              status: response.statusCode!,
              connection: response.headers.connection,
              reused: upload.reusedSocket,
            }),
          ),
        );
        upload.on('error', reject);
        if (chunked) upload.write(body.subarray(0, 100));
        upload.end(chunked ? body.subarray(100) : body);
      });
    try {
      const body = Buffer.alloc(64 * 1024, 7);
      expect(await post(body, false)).toEqual({ status: 401, connection: 'keep-alive', reused: false });
      expect(await post(body, true)).toEqual({ status: 401, connection: 'keep-alive', reused: true });
      expect(await post(body, false)).toEqual({ status: 401, connection: 'keep-alive', reused: true });
    } finally {
      agent.destroy();
    }
  });

  it('reads no more than 16 MiB of a refused upload: one declaring more is closed once answered, a chunked one past it', async () => {
    // Given clients that would send 64 MiB, as fast as the server reads, without a key
    const cap = 64 * MiB;
    // When one declares 1 GiB
    const declared = await endlessUpload(`${server.url}/v1/traces`, {}, 1024 * MiB, cap);
    // Then its 401 says the connection closes, and it does, with only what the sockets held read of the body
    expect(declared.head).toMatch(/^HTTP\/1\.1 401 /);
    expect(declared.head).toMatch(/^connection: close$/im);
    expect(declared).toMatchObject({ closed: true });
    expect(declared.written).toBeLessThan(16 * MiB);
    // When one sends its body chunked, of no declared length
    const chunked = await endlessUpload(`${server.url}/v1/traces`, {}, null, cap);
    // Then it gets its 401 on a connection kept alive, closed once 16 MiB more came
    expect(chunked.head).toMatch(/^HTTP\/1\.1 401 /);
    expect(chunked.head).toMatch(/^connection: keep-alive$/im);
    expect(chunked).toMatchObject({ closed: true });
    expect(chunked.written).toBeGreaterThan(16 * MiB);
    expect(chunked.written).toBeLessThan(32 * MiB);
  });
});
