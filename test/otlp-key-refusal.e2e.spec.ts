import { execFile } from 'node:child_process';
import { request, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/server';

const run = promisify(execFile);
const UPLOADER = join(__dirname, 'fixtures/upload-outcome.cjs');

describe('an OTLP upload refused for its key gets the 401/403, not a reset connection', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('postgres');
  });
  afterAll(() => server.close());

  it('answers an upload waiting for 100 Continue with the 401/403 instead, so it never sends its body', async () => {
    const body = Buffer.alloc(30 * 1024 * 1024, 7);
    const uploadAwaitingContinue = (authorization: string | null) =>
      new Promise<{ status: number; continued: boolean; authenticate: unknown }>((resolve, reject) => {
        let continued = false;
        const upload = request(`${server.url}/v1/traces`, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-protobuf',
            'content-length': body.length,
            expect: '100-continue',
            ...(authorization === null ? {} : { authorization }),
          },
        });
        upload.on('continue', () => {
          continued = true;
          upload.end(body);
        });
        upload.on('response', (response: IncomingMessage) => {
          response.resume();
          resolve({
            status: response.statusCode!,
            continued,
            authenticate: response.headers['www-authenticate'],
          });
          upload.destroy();
        });
        upload.on('error', reject);
        upload.flushHeaders();
      });
    expect(await uploadAwaitingContinue(null)).toEqual({
      status: 401,
      continued: false,
      authenticate: 'Bearer realm="errata"',
    });
    expect(await uploadAwaitingContinue('Bearer not-a-key')).toEqual({
      status: 401,
      continued: false,
      authenticate: 'Bearer realm="errata", error="invalid_token"',
    });
    expect(await uploadAwaitingContinue(`Bearer ${server.readKey}`)).toMatchObject({
      status: 403,
      continued: false,
    });
  }, 60_000);

  it('answers uploads sent at once, without Expect, with the 401/403 after their bodies, not with a reset', async () => {
    // A client in another process sending 30 MiB bodies; closing the connection on them at once reset each (EPIPE)
    // before it read any answer.
    const outcomes = async (key: string) =>
      JSON.parse((await run(process.execPath, [UPLOADER, server.url, key, '2', '30'])).stdout) as string[];
    expect(await outcomes('-')).toEqual(['401 null', '401 null']);
    expect(await outcomes('not-a-key')).toEqual(['401 null', '401 null']);
    expect(await outcomes(server.readKey)).toEqual(['403 null', '403 null']);
  }, 60_000);
});
