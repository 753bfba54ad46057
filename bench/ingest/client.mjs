// The load generator: the bench process itself, so its CPU is measured (and reported) alongside the server's.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { INGEST_KEY, REQUEST_TIMEOUT_MS, SPANS_PER_REQUEST } from './settings.mjs';

/**
 * POSTs every body with `concurrency` requests in flight over keep-alive connections (node:http, lower overhead
 * than fetch/undici here). Returns acknowledged spans, non-200 answers and per-request latencies.
 */
export async function sendAll(port, bodies, concurrency) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
  const headers = { 'content-type': 'application/x-protobuf', authorization: `Bearer ${INGEST_KEY}` };
  const latencies = [];
  const failures = new Map();
  let ackedRequests = 0;
  let partial = 0;
  let next = 0;
  const post = (body) =>
    new Promise((resolvePost, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/traces',
          agent,
          timeout: REQUEST_TIMEOUT_MS,
          headers: { ...headers, 'content-length': body.length },
        },
        (res) => {
          const chunks = [];
          res.on('data', (chunk) => chunks.push(chunk));
          res.on('end', () => resolvePost({ status: res.statusCode, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  const worker = async () => {
    while (next < bodies.length) {
      const body = bodies[next++];
      const began = performance.now();
      let answer;
      try {
        answer = await post(body);
      } catch (error) {
        answer = { status: `error: ${error.code ?? error.message}`, body: Buffer.alloc(0) };
      }
      latencies.push(performance.now() - began);
      if (answer.status === 200) {
        ackedRequests++;
        if (answer.body.length > 0) partial++; // an ExportTraceServiceResponse with partial_success
      } else {
        const entry = failures.get(answer.status) ?? {
          count: 0,
          sample: answer.body.toString('utf8').slice(0, 300),
        };
        entry.count++;
        failures.set(answer.status, entry);
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, bodies.length) }, worker));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return {
    ackedRequests,
    ackedSpans: ackedRequests * SPANS_PER_REQUEST,
    partial,
    failures,
    latencies,
    seconds,
  };
}
