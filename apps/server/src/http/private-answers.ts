import type { NextFunction, Request, Response } from 'express';

/** The paths whose answers hold a project's data: the REST API and Errata's MCP endpoint. */
export const PRIVATE_PATHS = ['/api', '/mcp'];

/**
 * A project's data is neither kept by a browser's or a proxy's cache (a shared machine, a corporate proxy) nor
 * sniffed into another content type than the one it is sent as.
 */
export function privateAnswers(_request: Request, response: Response, next: NextFunction): void {
  response.setHeader('cache-control', 'no-store');
  response.setHeader('x-content-type-options', 'nosniff');
  next();
}
