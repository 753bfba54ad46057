import { describe, expect, it } from 'vitest';
import { copyField, copyJsonField } from './copy-text';

describe('COPY text fields', () => {
  it('escapes the characters COPY treats specially, and writes null as \\N', () => {
    expect(copyField('a\tb\nc\rd\\e')).toBe('a\\tb\\nc\\rd\\\\e');
    expect(copyField(null)).toBe('\\N');
    expect(copyField('plain')).toBe('plain');
  });

  it('escapes JSON text exactly as copyField does', () => {
    const values = [
      { text: 'tab\there, newline\nthere, cr\r, backslash \\ and "quotes"' },
      { path: 'C:\\Users\\errata', unicode: 'żółw \u2028 \u0001', nested: [{ a: '\\n literal' }] },
      'a "string" with \\',
      { empty: '', n: 1.5, ok: true, none: null },
    ];
    for (const value of values) {
      const json = JSON.stringify(value);
      expect(copyJsonField(json)).toBe(copyField(json));
    }
  });
});
