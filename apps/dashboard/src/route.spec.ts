import { describe, expect, it } from 'vitest';
import { filtersOf, traceOrigin } from './route';
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

  it('reads an offset typed into the address bar as written, though the URL made its "+" a space', () => {
    expect(filters('from=2026-11-30T11:30:00+05:30&to=2026-12-01T00:00:00Z')).toMatchObject({
      range: 'custom',
      from: new Date('2026-11-30T06:00:00Z'),
      notices: [],
    });
  });
});

describe('a dashboard link whose window cannot be used as written', () => {
  inTimeZone('America/New_York');

  it('runs from "from" to now when "to" is left out, as the REST API does', () => {
    const shown = filters('from=2026-11-20T00:00:00Z');
    expect(shown).toMatchObject({ range: 'custom', from: new Date('2026-11-20T00:00:00Z'), notices: [] });
    expect(shown.to).toEqual(new Date('2026-12-01T10:01:00Z'));
  });

  it.each([
    ['from=2026-11-31&to=2026-12-01', '"from"', '2026-11-31'],
    ['from=yesterday&to=today', '"from"', 'yesterday'],
    ['from=2026-11-20&to=2026-13-01', '"to"', '2026-13-01'],
    ['from=2026-11-30&to=2026-11-20', '"from" (2026-11-30) is not before "to" (2026-11-20)', ''],
    ['from=2026-12-05', '"from" (2026-12-05) is not in the past', ''],
    ['range=2y', '"range" must be one of 1h, 24h, 7d, 30d, 90d, not "2y"', ''],
  ])('%s: says which parameter and what is shown instead', (query, names, value) => {
    const shown = filters(query);
    expect(shown.range).toBe('24h');
    const notice = shown.notices.join(' ');
    expect(notice).toContain(names);
    expect(notice).toContain(value);
    expect(notice).toContain('Showing last 24 hours instead.');
  });

  it('has nothing to say about a range a valid from and to override, nor about a plain link', () => {
    expect(filters('from=2026-11-30T00:00:00Z&to=2026-12-01T00:00:00Z&range=2y').notices).toEqual([]);
    expect(filters('').notices).toEqual([]);
    expect(filters('range=7d&server=orders').notices).toEqual([]);
  });
});

describe('the view a run timeline was opened from', () => {
  it('is the page its link names, when that page links to timelines', () => {
    expect(traceOrigin('/misclassified')?.nav).toBe('misclassified');
    expect(traceOrigin('/retry-waste')?.nav).toBe('retry-waste');
    expect(traceOrigin('/findings/0123456789abcdef0123')).toEqual({
      path: '/findings/0123456789abcdef0123',
      label: 'Finding',
      nav: 'findings',
    });
  });

  it('is none without one, or for a page that does not link to timelines or is no page (nor another site)', () => {
    for (const back of [null, '', '/', '/servers', '/findings/nope', '//evil.example/misclassified']) {
      expect(traceOrigin(back), String(back)).toBeNull();
    }
  });
});
