import type { Server } from 'node:http';
import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';

/** How long connections may go on after shutdown begins, before they are closed under their requests. */
export const SHUTDOWN_DEADLINE_MS = 10_000;

/**
 * Ends the server's connections when it stops. Exporters keep their connections alive and send on them for as long
 * as they run: closing the listening socket alone would leave those open, and the server storing spans for minutes
 * after SIGTERM. Once shutdown begins, every answer closes its connection (`Connection: close`), those of requests
 * already in flight too, idle connections are closed, and after SHUTDOWN_DEADLINE_MS the rest too. A request cut off
 * then was not acknowledged, so its exporter sends it again, and spans stored twice are stored once.
 */
@Injectable()
export class ConnectionDrain implements BeforeApplicationShutdown {
  private draining = false;
  /** The stop was said already (a signal during startup, `StartupSignals`). */
  private stopSaid = false;
  /**
   * Answers begun before shutdown and not yet sent. Each would keep its connection alive once sent, and Node closes
   * that connection only when its keep-alive times out (5 s), which the process waited for.
   */
  private readonly unanswered = new Set<Response>();

  constructor(private readonly adapter: HttpAdapterHost) {}

  /** Express middleware, mounted before every route. */
  readonly middleware = (_request: Request, response: Response, next: NextFunction): void => {
    if (this.draining) response.setHeader('connection', 'close');
    else {
      this.unanswered.add(response);
      response.once('close', () => this.unanswered.delete(response));
    }
    next();
  };

  /** The stop was said in the log already: shutting down does not say it twice. */
  stopAlreadySaid(): void {
    this.stopSaid = true;
  }

  beforeApplicationShutdown(signal?: string): void {
    this.draining = true;
    if (!this.stopSaid)
      new Logger('Errata').log(
        `${signal ?? 'shutdown'}: stopping (requests in flight get up to ${SHUTDOWN_DEADLINE_MS / 1000} s)`,
      );
    for (const response of this.unanswered)
      if (!response.headersSent) response.setHeader('connection', 'close');
    this.unanswered.clear();
    const server = this.adapter.httpAdapter?.getHttpServer() as Server | undefined;
    if (server === undefined) return;
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), SHUTDOWN_DEADLINE_MS).unref();
  }
}
