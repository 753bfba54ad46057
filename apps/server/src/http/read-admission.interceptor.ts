import {
  Injectable,
  ServiceUnavailableException,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { Response } from 'express';
import { finalize, from, mergeMap, type Observable } from 'rxjs';
import { READ_RETRY_AFTER_SECONDS, ReadAdmission } from '../services/read-admission';

/**
 * A read route's place among `ERRATA_MAX_CONCURRENT_READS`, held until its answer is made (or fails). A read waits
 * for a place in a short queue; past it, 503 + Retry-After at once, as an ingest past ERRATA_MAX_CONCURRENT_INGESTS.
 */
@Injectable()
export class ReadAdmitted implements NestInterceptor {
  constructor(private readonly admission: ReadAdmission) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return from(this.admission.enter()).pipe(
      mergeMap((admitted) => {
        if (!admitted) {
          context
            .switchToHttp()
            .getResponse<Response>()
            .setHeader('Retry-After', String(READ_RETRY_AFTER_SECONDS));
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
