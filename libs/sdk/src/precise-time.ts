/**
 * Now, on the high-resolution clock, as OpenTelemetry's `hrTime()` gives it, for the start and end of every span the
 * SDK records (tool-call-tracer.ts says why the spans are not left to OpenTelemetry's millisecond start). The same
 * arithmetic, but the time origin, which never changes, is converted once: `hrTime()` builds three arrays a call,
 * this one, and it runs twice per tool call.
 */
import type { HrTime } from '@opentelemetry/api';
import { millisToHrTime, otperformance } from '@opentelemetry/core';

const NANOSECONDS_PER_SECOND = 1e9;
const NANOSECONDS_PER_MILLISECOND = 1e6;
const [ORIGIN_SECONDS, ORIGIN_NANOS] = millisToHrTime(otperformance.timeOrigin);

/** `performanceNow`: a `performance.now()` reading, for tests; by default the clock's. */
export function preciseTime(performanceNow: number = otperformance.now()): HrTime {
  // As millisToHrTime(performanceNow), then addHrTimes(origin, that).
  let seconds = ORIGIN_SECONDS + Math.trunc(performanceNow / 1000);
  let nanos = ORIGIN_NANOS + Math.round((performanceNow % 1000) * NANOSECONDS_PER_MILLISECOND);
  if (nanos >= NANOSECONDS_PER_SECOND) {
    nanos -= NANOSECONDS_PER_SECOND;
    seconds += 1;
  }
  return [seconds, nanos];
}
