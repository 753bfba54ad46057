import { describe, expect, it } from 'vitest';
import { jsonForPostgres, withoutNul } from './postgres-text';

describe('text for PostgreSQL', () => {
  it('replaces NUL and lone surrogates with U+FFFD in JSON text, and leaves what only looks like them', () => {
    const json = jsonForPostgres({
      nul: 'a\u0000b',
      high: 'x\ud800y',
      low: 'x\udc00y',
      pair: 'ok 😀',
      literal: 'the text \\u0000 and \\ud800, written out',
      escapedBackslashThenLone: '\\\ud800',
    });
    expect(JSON.parse(json)).toEqual({
      nul: 'a\uFFFDb',
      high: 'x\uFFFDy',
      low: 'x\uFFFDy',
      pair: 'ok 😀',
      literal: 'the text \\u0000 and \\ud800, written out',
      escapedBackslashThenLone: '\\\uFFFD',
    });
    expect(jsonForPostgres({ plain: 'nothing to replace' })).toBe('{"plain":"nothing to replace"}');
  });

  it('replaces NUL in text columns', () => {
    expect(withoutNul('a\u0000b')).toBe('a\uFFFDb');
    expect(withoutNul(null)).toBeNull();
  });
});
