import {
  BadRequestException,
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { QUERY_PARAMETERS } from './openapi';
import { unknownParameterRefusal } from './text-parameter';

/**
 * Refuses a query parameter the route does not take (`QueryParameter`): a misspelt `groupby`, `sever` or `Limit`
 * would otherwise be ignored, and the answer would cover what the caller meant to leave out.
 */
@Injectable()
export class DocumentedQueryOnly implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const taken = this.reflector.get<string[] | undefined>(QUERY_PARAMETERS, context.getHandler()) ?? [];
    const { query } = context.switchToHttp().getRequest<Request>();
    const unknown = Object.keys(query).find((name) => !taken.includes(name));
    if (unknown !== undefined) {
      throw new BadRequestException(unknownParameterRefusal(unknown, taken));
    }
    return next.handle();
  }
}
