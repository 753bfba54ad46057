import type { NextFunction, Request, Response } from 'express';
import type { IngestActivity } from '../services/ingest-activity';

/**
 * On the embedded store every request counts as activity the background projector gives way to (IngestActivity):
 * PGlite has one connection, a projector batch holds it, and each statement of a request waited a whole batch (a
 * `/readyz` during a rebuild was answered once the rebuild was over). OTLP requests count themselves, once their
 * body has arrived: a body still on its way holds no connection.
 */
export function countEmbeddedStoreRequests(activity: IngestActivity) {
  return (request: Request, response: Response, next: NextFunction): void => {
    if (request.path === '/v1/traces') {
      next();
      return;
    }
    activity.begin();
    response.once('close', () => activity.end());
    next();
  };
}
