import { ConsoleLogger } from '@nestjs/common';

/**
 * Nest's console logger with its text lines stamped in UTC, ISO 8601, as every time Errata shows: Nest's own stamp
 * is the host's locale and time zone (`12/2/2026, 5:55:43 AM` under `TZ=America/New_York`), without saying which.
 * JSON lines are unchanged (their `timestamp` is epoch milliseconds).
 */
export class UtcConsoleLogger extends ConsoleLogger {
  protected override getTimestamp(): string {
    return new Date().toISOString();
  }
}
