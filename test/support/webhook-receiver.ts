/** A local webhook receiver: answers the statuses it is given, and checks each webhook's signature. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly verified: boolean;
  readonly at: number;
}

/** A webhook receiver: answers with the queued statuses (then 200), verifies every request's signature. */
export class Receiver {
  readonly received: Received[] = [];
  secret = '';
  answers: number[] = [];
  /** Sent with the first queued answer. */
  retryAfter: string | null = null;
  private readonly server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified = false;
      try {
        new Webhook(this.secret).verify(body, request.headers as Record<string, string>);
        verified = true;
      } catch {
        verified = false;
      }
      this.received.push({ headers: request.headers, body, verified, at: Date.now() });
      const answer = this.answers.shift();
      response.statusCode = answer ?? 200;
      if (answer !== undefined && this.retryAfter !== null)
        response.setHeader('retry-after', this.retryAfter);
      response.end();
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
