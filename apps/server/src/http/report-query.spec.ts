import { BadRequestException } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { MAX_SERIES_POINTS } from '@errata/domain';
import { parseReportFilter, parseSeriesQuery } from './report-query';

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
      groupLimit: 10,
    });
    expect(parse({ from: '2026-11-27T10:30:00Z' }).step).toBe('hour');
    expect(parse({ from: '2026-11-27T10:29:59Z' }).step).toBe('day');
    expect(parse({ from: '2026-11-01T00:00:00Z', step: 'hour' }).step).toBe('hour');
  });

  it('answers 400 with the reason for a missing from, a bad step, an empty window or too many points', () => {
    expect(message({})).toContain('a series needs "from" (ISO-8601, a date or a date-time)');
    expect(message({ from: '2026-11-29T00:00:00Z', step: 'week' })).toContain(
      '"step" must be one of hour, day',
    );
    expect(message({ from: '2026-12-01T00:00:00Z' })).toContain('"from" must be before "to"');
    expect(message({ from: '2026-01-01T00:00:00Z', step: 'hour' })).toContain(
      `at most ${MAX_SERIES_POINTS} points (use a shorter window or step=day)`,
    );
    // Already in days: step=day is no way out
    expect(message({ from: '2020-01-01' })).toBe(
      `the window has 2526 days; a series has at most ${MAX_SERIES_POINTS} points (use a shorter window)`,
    );
    expect(message({ from: '2026-11-29T00:00:00Z', groupBy: 'colour' })).toContain(
      '"groupBy" must be one of',
    );
    expect(parse({ from: '2026-11-29T00:00:00Z', groupBy: 'tool' }).groupBy).toBe('tool');
  });

  it('keeps 10 groups of the breakdown by default, 1 to 100 when asked, and answers 400 otherwise', () => {
    const from = '2026-11-29T00:00:00Z';
    expect(parse({ from, groupLimit: '100' }).groupLimit).toBe(100);
    expect(parse({ from, groupLimit: '' }).groupLimit).toBe(10);
    for (const bad of ['0', '101', '-1', '2.5', 'ten']) {
      expect(message({ from, groupLimit: bad })).toBe('"groupLimit" must be a whole number from 1 to 100');
    }
    expect(message({ from, groupLimit: ['5', '6'] })).toContain('"groupLimit"');
  });
});

describe('parseReportFilter dates', () => {
  const filterMessage = (raw: Record<string, unknown>): string => {
    try {
      parseReportFilter(raw);
    } catch (error) {
      expect(error).toBeInstanceOf(BadRequestException);
      return (error as BadRequestException).message;
    }
    throw new Error('expected a 400');
  };

  it('answers 400 for a date the calendar does not have, which Date would roll over into another day', () => {
    for (const from of [
      '2026-11-31T02:44:00Z',
      '2026-02-29',
      '2026-11-31',
      '2026-13-01T00:00:00Z',
      '2026-01-01T25:00:00Z',
      '2026-01-01T23:60:00Z',
      '2026-01-01T24:30:00Z',
    ]) {
      // A plain date is one of the forms taken, and the answer says so
      expect(filterMessage({ from })).toBe(
        `"from" must be an ISO-8601 date or date-time such as 2026-11-30 or 2026-11-30T00:00:00Z; got "${from}"`,
      );
    }
  });

  it('takes every real date, a leap day and the end of a day (24:00) included', () => {
    expect(parseReportFilter({ from: '2024-02-29T12:00:00Z' }).from).toEqual(
      new Date('2024-02-29T12:00:00Z'),
    );
    expect(parseReportFilter({ to: '2026-11-30T24:00:00Z' }).to).toEqual(new Date('2026-12-01T00:00:00Z'));
    expect(parseReportFilter({ from: '1600-01-01T00:00:00Z', to: '2300-01-01' })).toMatchObject({
      from: new Date('1600-01-01T00:00:00Z'),
      to: new Date('2300-01-01T00:00:00Z'),
    });
  });

  it('answers 400 for a bound finer than a millisecond, which would be cut off; zeros beyond it are fine', () => {
    expect(filterMessage({ from: '2026-11-30T12:00:00.000900Z' })).toContain(
      '"from" may be given to the millisecond at most',
    );
    expect(filterMessage({ to: '2026-11-30T12:00:00.1234567+01:00' })).toContain(
      '"to" may be given to the millisecond at most',
    );
    expect(parseReportFilter({ from: '2026-11-30T12:00:00.123000000Z' }).from).toEqual(
      new Date('2026-11-30T12:00:00.123Z'),
    );
  });
});

describe('parseReportFilter parameters', () => {
  it('answers 400 for a parameter given twice: which one was meant is unknown', () => {
    expect(() => parseReportFilter({ server: ['a', 'b'] })).toThrow('"server" must be given once');
  });
});
