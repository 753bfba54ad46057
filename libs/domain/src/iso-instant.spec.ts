import { describe, expect, it } from 'vitest';
import { parseIsoInstant, parseQueryInstant } from './iso-instant';
import { inTimeZone } from './time-zone.spec-helper';

describe('parseIsoInstant', () => {
  inTimeZone('America/New_York');

  it('names no instant for a date the calendar does not have, which Date would roll over into another day', () => {
    for (const value of [
      '2026-11-31T02:44:00Z',
      '2026-11-31',
      '2026-02-29',
      '2026-13-01T00:00:00Z',
      '2026-00-10',
      '2026-01-01T25:00:00Z',
      '2026-01-01T23:60:00Z',
      '2026-01-01T23:59:60Z',
      '2026-01-01T24:30:00Z',
    ]) {
      expect(parseIsoInstant(value), value).toBeNull();
    }
  });

  it('names no instant for what is not ISO 8601', () => {
    for (const value of [
      '',
      'yesterday',
      '1764547200000',
      'Tue, 01 Dec 2026 00:00:00 GMT',
      '2026-12-01 00:00',
    ]) {
      expect(parseIsoInstant(value), value).toBeNull();
    }
  });

  it('takes every real date, a leap day and the end of a day (24:00) included', () => {
    expect(parseIsoInstant('2024-02-29T12:00:00Z')).toEqual(new Date(Date.UTC(2024, 1, 29, 12)));
    expect(parseIsoInstant('2026-11-30T24:00:00Z')).toEqual(new Date(Date.UTC(2026, 11, 1)));
    expect(parseIsoInstant('0000-02-29')?.toISOString()).toBe('0000-02-29T00:00:00.000Z'); // a leap year
    expect(parseIsoInstant('2026-11-30T23:59:59.999+01:00')).toEqual(
      new Date(Date.UTC(2026, 10, 30, 22, 59, 59, 999)),
    );
  });

  it('takes an offset in hours alone, as ISO 8601 allows, and refuses one the clock does not have', () => {
    expect(parseIsoInstant('2026-11-30T10:00:00+05')).toEqual(new Date(Date.UTC(2026, 10, 30, 5)));
    expect(parseIsoInstant('2026-11-30T10:00-03')).toEqual(new Date(Date.UTC(2026, 10, 30, 13)));
    expect(parseIsoInstant('2026-11-30T10:00:00.5+00')).toEqual(
      new Date(Date.UTC(2026, 10, 30, 10, 0, 0, 500)),
    );
    for (const value of [
      '2026-11-30T10:00:00+25',
      '2026-11-30T10:00:00+5',
      '2026-11-30T10:00:00+05:75',
      '2026-11-30+05',
    ]) {
      expect(parseIsoInstant(value), value).toBeNull();
    }
  });

  it('reads a date-time without an offset as UTC, like a date alone, whatever the local time zone', () => {
    expect(parseIsoInstant('2026-12-01T08:30')).toEqual(new Date(Date.UTC(2026, 11, 1, 8, 30)));
    expect(parseIsoInstant('2026-12-01T08:30:15.5')).toEqual(new Date(Date.UTC(2026, 11, 1, 8, 30, 15, 500)));
    expect(parseIsoInstant('2026-12-01')).toEqual(new Date(Date.UTC(2026, 11, 1)));
  });
});

describe('parseQueryInstant', () => {
  it('reads a space where an offset sign belongs as the "+" that form decoding turned into it', () => {
    const instant = new Date(Date.UTC(2026, 10, 30, 4, 30));
    expect(parseQueryInstant('2026-11-30T10:00:00 05:30')).toEqual(instant);
    expect(parseQueryInstant('2026-11-30T10:00 0530')).toEqual(instant);
    expect(parseQueryInstant('2026-11-30T10:00:00+05:30')).toEqual(instant);
    expect(parseQueryInstant('2026-11-30T10:00:00.250 05:30')).toEqual(new Date(instant.getTime() + 250));
    expect(parseQueryInstant('2026-11-30T09:30 05')).toEqual(instant);
  });

  it('takes a space nowhere else', () => {
    for (const value of [
      '2026-11-30 10:00:00Z',
      '2026-11-30 05:30',
      '2026-11-30T10:00:00  05:30',
      ' 2026-11-30',
    ]) {
      expect(parseQueryInstant(value), value).toBeNull();
    }
  });
});
