import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A proxy in front of a Streamable HTTP server (as a load balancer or gateway is), which answers the next POST
 * with an HTTP error status when told to, and otherwise passes everything through, SSE streams included.
 */
export async function startFaultyProxy(target: URL) {
  let fault: { status: number; body: string } | null = null;
  const proxy = createServer((req, res) => {
    if (req.method === 'POST' && fault !== null) {
      const { status, body } = fault;
      fault = null;
      req.resume();
      res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
      return;
    }
    const upstream = httpRequest(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    failNextPost: (status: number, body: string) => void (fault = { status, body }),
    close: () => new Promise<void>((resolve) => proxy.close(() => resolve()) && proxy.closeAllConnections()),
  };
}
