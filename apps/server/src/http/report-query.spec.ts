import { BadRequestException } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { MAX_SERIES_POINTS, parseSeriesQuery } from './report-query';

const NOW = new Date('2026-11-30T10:30:00Z');
const GROUPINGS = ['category', 'server', 'tool'] as const;
const parse = (raw: Record<string, unknown>) => parseSeriesQuery(raw, GROUPINGS, 'category', NOW);
const message = (raw: Record<string, unknown>): string => {
  try {
    parseSeriesQuery(raw, GROUPINGS, 'category', NOW);
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestException);
    return (error as BadRequestException).message;
  }
  throw new Error('expected a 400');
};

describe('parseSeriesQuery', () => {
  it('given from only, the window ends now and a window of up to 72 hours is cut into hours', () => {
    expect(parse({ from: '2026-11-29T10:30:00Z', server: 'github' })).toEqual({
      from: new Date('2026-11-29T10:30:00Z'),
      to: NOW,
      server: 'github',
      tool: null,
      agent: null,
      step: 'hour',
      groupBy: 'category',
    });
    expect(parse({ from: '2026-11-27T10:30:00Z' }).step).toBe('hour');
    expect(parse({ from: '2026-11-27T10:29:59Z' }).step).toBe('day');
    expect(parse({ from: '2026-11-01T00:00:00Z', step: 'hour' }).step).toBe('hour');
  });

  it('answers 400 with the reason for a missing from, a bad step, an empty window or too many points', () => {
    expect(message({})).toContain('a series needs "from"');
    expect(message({ from: '2026-11-29T00:00:00Z', step: 'week' })).toContain(
      '"step" must be one of hour, day',
    );
    expect(message({ from: '2026-12-01T00:00:00Z' })).toContain('"from" must be before "to"');
    expect(message({ from: '2026-01-01T00:00:00Z', step: 'hour' })).toContain(
      `at most ${MAX_SERIES_POINTS} points`,
    );
    expect(message({ from: '2026-11-29T00:00:00Z', groupBy: 'colour' })).toContain(
      '"groupBy" must be one of',
    );
    expect(parse({ from: '2026-11-29T00:00:00Z', groupBy: 'tool' }).groupBy).toBe('tool');
  });
});
