import { describe, expect, it } from 'vitest';
import { escapeControls } from './escape-controls';

describe('escapeControls', () => {
  it('writes terminal control characters, line breaks and bidi controls as visible escapes', () => {
    expect(escapeControls('ctl\u001b]0;OWNED\u0007\u001b[2J\nFORGED')).toBe(
      'ctl\\u001b]0;OWNED\\u0007\\u001b[2J\\u000aFORGED',
    );
    expect(escapeControls('a\u0000b\rc\td\u007fe\u0085f\u009bg')).toBe(
      'a\\u0000b\\u000dc\\u0009d\\u007fe\\u0085f\\u009bg',
    );
    expect(
      escapeControls('billing\u202e \u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c'),
    ).toBe('billing\\u202e \\u202a\\u202b\\u202c\\u202d\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c');
  });

  it('leaves printable text alone, other languages and emoji included', () => {
    for (const text of ['search_orders', 'café 检索 مرحبا 🚀', '<script>`x`</script>', '\u00a0nbsp', '']) {
      expect(escapeControls(text)).toBe(text);
    }
  });

  it('gives an escape that means the same character in a JSON string', () => {
    const text = 'x\u001b\u202e\u0085y';
    expect(JSON.parse(`"${escapeControls(text)}"`)).toBe(text);
  });
});
