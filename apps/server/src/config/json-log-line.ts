/**
 * One line of `ERRATA_LOG_FORMAT=json` written outside Nest's logger (the first keys, a failed start), in the shape
 * its `ConsoleLogger` writes with `json: true`, so that a collector reading JSON lines takes every line alike.
 * `fields` come between the message and the context.
 */
export function jsonLogLine(
  level: 'log' | 'error',
  context: string,
  message: string,
  fields: Record<string, unknown> = {},
): string {
  return `${JSON.stringify({ level, pid: process.pid, timestamp: Date.now(), message, ...fields, context })}\n`;
}
