import { hrTime } from '@opentelemetry/core';
import { expect, it } from 'vitest';
import { preciseTime } from './precise-time';

it("gives OpenTelemetry's hrTime() to the nanosecond, also where the nanoseconds carry into the seconds", () => {
  const readings = [0, 0.0004, 1, 999.9999996, 1234.5678912, 86_400_000.000001, performance.now()];
  // Readings whose nanoseconds, added to the time origin's, reach a second or fall just short of it.
  const originNanos = hrTime(0)[1];
  for (const justBelow of [1e9 - originNanos - 1, 1e9 - originNanos, 1e9 - originNanos + 1]) {
    readings.push(justBelow / 1e6, 5000 + justBelow / 1e6);
  }
  for (const reading of readings) expect(preciseTime(reading), String(reading)).toEqual(hrTime(reading));
});

it('reads the clock when given no reading', () => {
  const before = hrTime();
  const now = preciseTime();
  const after = hrTime();
  const ns = ([seconds, nanos]: readonly number[]) => (seconds ?? 0) * 1e9 + (nanos ?? 0);
  expect(ns(now)).toBeGreaterThanOrEqual(ns(before));
  expect(ns(now)).toBeLessThanOrEqual(ns(after));
});
