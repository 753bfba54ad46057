import { describe, expect, it } from 'vitest';
import { partialSuccessMessage, type RejectedSpan } from './index';

describe('partialSuccessMessage', () => {
  it('is empty when nothing was rejected', () => {
    expect(partialSuccessMessage([])).toBe('');
  });

  it('names each rejected span and its reason', () => {
    const rejected: RejectedSpan[] = [
      { traceId: null, spanId: '00f067aa0ba902b7', reason: 'trace_id must be 16 bytes (got 3)' },
      { traceId: null, spanId: null, reason: 'span_id is all zeros' },
    ];
    expect(partialSuccessMessage(rejected)).toBe(
      '2 spans rejected: span 00f067aa0ba902b7: trace_id must be 16 bytes (got 3); ' +
        'span without a valid span_id: span_id is all zeros',
    );
    expect(partialSuccessMessage(rejected.slice(0, 1))).toMatch(/^1 span rejected: /);
  });

  it('stays near 1 KiB and says how many were left out', () => {
    const rejected = Array.from({ length: 1000 }, (_, i) => ({
      traceId: null,
      spanId: i.toString(16).padStart(16, '0'),
      reason: 'start_time_unix_nano is missing or zero',
    }));
    const message = partialSuccessMessage(rejected);
    expect(message.length).toBeLessThanOrEqual(1024 + 8);
    const match = /; and (\d+) more$/.exec(message);
    expect(match).not.toBeNull();
    const listed = message.split('; span ').length;
    expect(listed + Number(match?.[1])).toBe(1000);
    expect(message.startsWith('1000 spans rejected: span 0000000000000000: start_time_unix_nano')).toBe(true);
  });

  it('shortens a single very long reason', () => {
    const message = partialSuccessMessage([{ traceId: null, spanId: null, reason: 'r'.repeat(5000) }]);
    expect(message.length).toBeLessThan(600);
  });
});
