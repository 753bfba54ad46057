import { describe, expect, it } from 'vitest';
import { filtersOf } from './route';
import { inTimeZone } from '@errata/domain/time-zone.spec-helper';

const NOW = new Date('2026-12-01T10:00:30Z');
const filters = (query: string) => filtersOf(new URLSearchParams(query), NOW);

describe('the window in a dashboard link', () => {
  inTimeZone('America/New_York');

  it('is the explicit from and to when both name real instants', () => {
    expect(filters('from=2026-11-30T00:00:00Z&to=2026-12-01T00:00:00Z')).toMatchObject({
      range: 'custom',
      from: new Date('2026-11-30T00:00:00Z'),
      to: new Date('2026-12-01T00:00:00Z'),
    });
  });

  it('is the named range, not another day, when a date does not exist (2026-11-31 is no 1 December)', () => {
    expect(filters('from=2026-11-31T00:00:00Z&to=2026-12-02T00:00:00Z&range=7d')).toMatchObject({
      range: '7d',
      from: new Date('2026-11-24T10:01:00Z'),
      to: new Date('2026-12-01T10:01:00Z'),
    });
  });

  it('reads a time without an offset as UTC, as the REST API does, so the page and its figures agree', () => {
    expect(filters('from=2026-11-30T06:00&to=2026-11-30T18:00').from).toEqual(
      new Date('2026-11-30T06:00:00Z'),
    );
  });
});
