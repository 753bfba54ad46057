/**
 * An OTLP/HTTP endpoint of a test's own: keeps what an exporter sends to `/v1/traces` (protobuf, uncompressed) and
 * decodes it as Errata does, for runtimes in child processes whose spans cannot be read in memory.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SpanRecord } from '@errata/domain';
import { decodeTraceRequest } from '@errata/otlp';

export async function startOtlpReceiver() {
  const bodies: Buffer[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces') bodies.push(Buffer.concat(chunks));
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    /** The exporter's environment: OTEL_EXPORTER_OTLP_ENDPOINT at this receiver, compression off. */
    exporterEnv: {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_COMPRESSION: 'none',
    },
    /** Every span received since the last `clear()`, in the order sent. */
    spans: (): SpanRecord[] =>
      bodies.flatMap(
        (body) => decodeTraceRequest(body, 'protobuf', { maxAttributeValueBytes: 1 << 20 }).spans,
      ),
    clear: () => void (bodies.length = 0),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
