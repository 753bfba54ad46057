import { afterAll, beforeAll } from 'vitest';

/**
 * Runs the enclosing suite in a time zone away from UTC, where a date-time read as local time shows. Node reads TZ
 * again whenever it is set.
 */
export function inTimeZone(zone: string): void {
  const previous = process.env['TZ'];
  beforeAll(() => {
    process.env['TZ'] = zone;
  });
  afterAll(() => {
    if (previous === undefined) delete process.env['TZ'];
    else process.env['TZ'] = previous;
  });
}
