import {
  HttpException,
  Injectable,
  ServiceUnavailableException,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { Response } from 'express';
import { finalize, from, mergeMap, type Observable } from 'rxjs';
import { READ_RETRY_AFTER_SECONDS, ReadAdmission } from '../services/read-admission';

/** nginx's "client closed request": written to nobody, it only keeps Nest from logging an abandoned read as a 500. */
const CLIENT_CLOSED_REQUEST = 499;

/**
 * A read route's place among `ERRATA_MAX_CONCURRENT_READS`, held until its answer is made (or fails). A read waits
 * for a place in a short queue; past it, 503 + Retry-After at once, as an ingest past ERRATA_MAX_CONCURRENT_INGESTS.
 * A read whose client disconnects while it waits leaves the queue without running.
 */
@Injectable()
export class ReadAdmitted implements NestInterceptor {
  constructor(private readonly admission: ReadAdmission) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const response = context.switchToHttp().getResponse<Response>();
    return from(this.admission.enter(clientGone(response))).pipe(
      mergeMap((entry) => {
        if (entry === 'abandoned') throw new HttpException('the client went away', CLIENT_CLOSED_REQUEST);
        if (entry === 'refused') {
          response.setHeader('Retry-After', String(READ_RETRY_AFTER_SECONDS));
          throw new ServiceUnavailableException(
            'Errata is answering and queueing as many reads as it may (ERRATA_MAX_CONCURRENT_READS); retry later',
          );
        }
        let left = false;
        const leave = () => {
          if (left) return;
          left = true;
          this.admission.leave();
        };
        try {
          return next.handle().pipe(finalize(leave));
        } catch (error) {
          leave();
          throw error;
        }
      }),
    );
  }
}

/**
 * Aborted when the client disconnects. The response's 'close', not the request's: a request closes once its body
 * has been read, which for a GET is at once, while its client still waits for the answer.
 */
function clientGone(response: Response): AbortSignal {
  const gone = new AbortController();
  if (response.destroyed) gone.abort();
  else response.once('close', () => gone.abort());
  return gone.signal;
}
