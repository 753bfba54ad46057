import { Catch, Logger, type ArgumentsHost } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import type { Response } from 'express';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  isDatabaseExhausted,
  isDatabaseUnavailable,
} from '../database/database-unavailable';

/**
 * The REST, MCP and health routes' answer when the database cannot take a request just now (unreachable or
 * restarting, a deadlock, out of connections; out of disk or memory, a statement cut off): 503 + Retry-After, which
 * a client may try again, and a warning in the log, not Nest's 500 and its stack. Everything else is Nest's.
 */
@Catch()
export class DatabaseExceptionFilter extends BaseExceptionFilter {
  private readonly logger = new Logger('Database');

  override catch(exception: unknown, host: ArgumentsHost): void {
    const unavailable = isDatabaseUnavailable(exception) || isDatabaseExhausted(exception);
    const response = host.getType() === 'http' ? host.switchToHttp().getResponse<Response>() : null;
    if (!unavailable || response === null || response.headersSent) {
      super.catch(exception, host);
      return;
    }
    this.logger.warn(`a request could not be answered: ${(exception as Error).message}`);
    response.status(503).setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS)).json({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'the database cannot answer now; retry later',
    });
  }
}
