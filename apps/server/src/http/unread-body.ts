import type { NextFunction, Request, Response } from 'express';

/**
 * Bounds what is read of a body nobody wants. A request answered before its body was read (refused for its key, or
 * while every ingest place is taken, or on no route) keeps its connection, and Node reads the rest of the body and
 * throws it away as it comes: the client, still sending, then reads its answer, where closing at once reset the
 * connection under it. That is worth it for a body a route could have taken, not for any size: a client, whatever
 * its key, could have the server read gigabytes at no cost to itself.
 *
 * So a request that declares more than `bound` bytes (over every route's limit) is answered `Connection: close`, and
 * Node closes the connection once the answer is written, reading no further. One that declares no length (chunked)
 * has its connection closed once `bound` bytes more have come after its answer.
 */
export function boundUnreadBodies(bound: number) {
  return (request: Request, response: Response, next: NextFunction): void => {
    if (Number(request.headers['content-length']) > bound) response.setHeader('Connection', 'close');
    // Before Node's own listener, which would set the body flowing to drop it unseen: it is counted as it is dropped.
    response.once('prefinish', () => {
      if (request.complete || request.readableFlowing !== null) return; // read, or being read by its route
      let discarded = 0;
      request.on('data', (chunk: Buffer) => {
        discarded += chunk.length;
        if (discarded > bound) request.socket.destroy();
      });
    });
    next();
  };
}
