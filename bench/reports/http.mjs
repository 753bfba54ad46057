// Keep-alive HTTP for the reports benchmark: OTLP posts and report GETs against the server child process.
import http from 'node:http';
import { INGEST_KEY } from '../ingest/settings.mjs';
import { READ_KEY } from './settings.mjs';

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function request(port, method, path, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path, agent, timeout: 300_000, headers },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 300 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** POSTs one OTLP protobuf body; throws unless the server answers 200. */
export async function postTraces(port, body) {
  const answer = await request(
    port,
    'POST',
    '/v1/traces',
    {
      'content-type': 'application/x-protobuf',
      authorization: `Bearer ${INGEST_KEY}`,
      'content-length': body.length,
    },
    body,
  );
  if (answer.status !== 200)
    throw new Error(`POST /v1/traces answered ${answer.status}: ${answer.body.slice(0, 300)}`);
}

/** GETs a report; throws unless 200. */
export async function getReport(port, path) {
  const answer = await request(port, 'GET', path, { authorization: `Bearer ${READ_KEY}` });
  if (answer.status !== 200)
    throw new Error(`GET ${path} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  return answer.body;
}
