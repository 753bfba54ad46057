import {
  HttpException,
  Injectable,
  ServiceUnavailableException,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { Response } from 'express';
import { catchError, finalize, from, mergeMap, type Observable } from 'rxjs';
import { CallerGoneError, readFor } from '../database/abandoned-reads';
import { READ_RETRY_AFTER_SECONDS, ReadAdmission } from '../services/read-admission';

/** nginx's "client closed request": written to nobody, it only keeps Nest from logging an abandoned read as a 500. */
const clientClosedRequest = () => new HttpException('the client went away', 499);

/**
 * A read route's place among `ERRATA_MAX_CONCURRENT_READS`, held until its answer is made (or fails). A read waits
 * for a place in a short queue; past it, 503 + Retry-After at once, as an ingest past ERRATA_MAX_CONCURRENT_INGESTS.
 * A read whose client disconnects while it waits leaves the queue without running; one answered meanwhile stops:
 * its statement running on PostgreSQL is canceled, and its place and connection are freed (`readFor`).
 */
@Injectable()
export class ReadAdmitted implements NestInterceptor {
  constructor(private readonly admission: ReadAdmission) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const response = context.switchToHttp().getResponse<Response>();
    const gone = clientGone(response);
    return from(this.admission.enter(gone)).pipe(
      mergeMap((entry) => {
        if (entry === 'abandoned') throw clientClosedRequest();
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
          // The handler's statements are canceled if the client goes (`readFor`): its place and connection freed.
          return readFor(gone, () => next.handle()).pipe(
            catchError((error: unknown) => {
              if (error instanceof CallerGoneError) throw clientClosedRequest();
              throw error;
            }),
            finalize(leave),
          );
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
