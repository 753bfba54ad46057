import {
  Catch,
  ForbiddenException,
  HttpException,
  HttpStatus,
  Logger,
  type ArgumentsHost,
  UnauthorizedException,
  type ExceptionFilter,
} from '@nestjs/common';
import { encodeStatus, encodingForContentType, OtlpDecodeError, type OtlpEncoding } from '@errata/otlp';
import type { Request, Response } from 'express';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  isDatabaseExhausted,
  isDatabaseUnavailable,
} from '../database/database-unavailable';
import { IngestOverloadedError } from '../services/ingest.service';
import {
  BadCompressionError,
  BodyTimeoutError,
  BodyTooLargeError,
  RequestAbortedError,
  UnsupportedEncodingError,
} from './read-request-body';

const CONTENT_TYPES: Record<OtlpEncoding, string> = {
  protobuf: 'application/x-protobuf',
  json: 'application/json',
};

interface Failure {
  readonly status: number;
  readonly message: string;
  readonly retryAfterSeconds?: number;
}

/**
 * Every failure of the OTLP endpoint as the spec wants it: the status code, and a google.rpc.Status body in
 * the request's encoding (JSON when the content type itself was the problem).
 */
@Catch()
export class OtlpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('OtlpIngest');

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<Request>();
    const response = host.switchToHttp().getResponse<Response>();
    const failure = this.describe(exception);
    const encoding = encodingForContentType(request.headers['content-type']) ?? 'json';
    if (failure.retryAfterSeconds !== undefined)
      response.setHeader('Retry-After', String(failure.retryAfterSeconds));
    // A request refused before its body was read (overload, its key) keeps its connection: the rest of the body is
    // discarded as it comes (up to a bound, unread-body.ts), and the client, still sending, reads the 503 and its
    // Retry-After, or the 401/403. Closing at once reset the connection under it (EPIPE), so it never saw them.
    // Also one that asked `Expect: 100-continue` and was sent `100 Continue` (start-server.ts) before its place was
    // taken by another: it is sending its body. One that was not sent it sends no body, and Node closes its
    // connection itself, whose next bytes could be that body or the next request. Anything else unread is not worth
    // reading to its end.
    const refusedUnread =
      exception instanceof IngestOverloadedError ||
      exception instanceof UnauthorizedException ||
      exception instanceof ForbiddenException;
    if (!request.readableEnded && !refusedUnread) response.setHeader('Connection', 'close');
    response
      .status(failure.status)
      .type(CONTENT_TYPES[encoding])
      .send(encodeStatus(encoding, { code: grpcCode(failure.status), message: failure.message }));
  }

  private describe(exception: unknown): Failure {
    if (exception instanceof HttpException) {
      const body = exception.getResponse();
      const message =
        typeof body === 'string' ? body : ((body as { message?: unknown }).message ?? exception.message);
      return { status: exception.getStatus(), message: String(message) };
    }
    if (exception instanceof OtlpDecodeError) return { status: 400, message: exception.message };
    if (exception instanceof BadCompressionError) return { status: 400, message: exception.message };
    if (exception instanceof BodyTooLargeError)
      return { status: HttpStatus.PAYLOAD_TOO_LARGE, message: exception.message };
    if (exception instanceof UnsupportedEncodingError) return { status: 415, message: exception.message };
    // Nobody reads this answer; it is no error of Errata's, so it is not logged as one.
    if (exception instanceof RequestAbortedError) return { status: 400, message: exception.message };
    if (exception instanceof BodyTimeoutError) return { status: 408, message: exception.message };
    if (exception instanceof IngestOverloadedError) {
      return { status: 503, message: exception.message, retryAfterSeconds: exception.retryAfterSeconds };
    }
    if (isDatabaseUnavailable(exception)) {
      this.logger.warn(`database unavailable: ${(exception as Error).message}`);
      return {
        status: 503,
        message: 'the event store is unavailable; retry later',
        retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
      };
    }
    // An exporter retries a 503 a bounded number of times, and drops the batch on a 500: out of disk or cut off
    // by a statement timeout, the spans can still land once space is freed or the load falls.
    if (isDatabaseExhausted(exception)) {
      this.logger.warn(`the event store cannot take this request now: ${(exception as Error).message}`);
      return {
        status: 503,
        message:
          'the event store cannot take this request now (out of space, or a statement timed out); retry later',
        retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
      };
    }
    this.logger.error(
      exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
    );
    return { status: 500, message: 'internal error; nothing from this request was stored' };
  }
}

/** google.rpc.Code for the HTTP status, per the usual gRPC↔HTTP mapping. */
function grpcCode(status: number): number {
  const codes: Record<number, number> = {
    400: 3,
    401: 16,
    403: 7,
    404: 5,
    408: 4,
    413: 8,
    415: 3,
    429: 8,
    503: 14,
  };
  return codes[status] ?? 13;
}
