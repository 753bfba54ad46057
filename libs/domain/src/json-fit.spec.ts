import { describe, expect, it } from 'vitest';
import { fitJson } from './json-fit';
import { utf8ByteLength } from './redaction';

describe('fitJson', () => {
  it('given a failure beside megabytes of rows, then the JSON fits and still says it failed, every key kept', () => {
    const rows = Array.from({ length: 5000 }, (_, i) => ({ id: i, note: 'n'.repeat(300) }));
    const value = { ok: false, error: { code: 'E_PERM', message: 'Permission denied for /srv/data' }, rows };
    const fitted = fitJson(value, 2048);
    expect(fitted).not.toBeNull();
    expect(utf8ByteLength(fitted!.text)).toBeLessThanOrEqual(2048);
    const parsed = JSON.parse(fitted!.text) as typeof value;
    expect(parsed).toMatchObject({ ok: false, error: value.error });
    expect(parsed.rows.at(-1)).toMatch(/^… 49\d\d more$/);
    expect(fitted!.value).toEqual(parsed);
  });

  it('shrinks only as far as the limit needs: long strings first lose their tails', () => {
    const fitted = fitJson({ status: 'error', detail: 'd'.repeat(3000) }, 2048);
    expect(JSON.parse(fitted!.text)).toEqual({ status: 'error', detail: `${'d'.repeat(512)}…` });
  });

  it('reads what JSON.stringify reads (toJSON), and leaves the value untouched', () => {
    const value = Object.freeze({
      at: new Date(0),
      list: Object.freeze(Array.from({ length: 100 }, () => 'x'.repeat(50))),
    });
    const fitted = fitJson(value, 1024);
    expect(JSON.parse(fitted!.text)).toMatchObject({ at: '1970-01-01T00:00:00.000Z' });
  });

  it('gives up on what cannot fit (thousands of keys) and on what is no object or list', () => {
    const wide = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`key${i}`, i]));
    expect(fitJson(wide, 2048)).toBeNull();
    expect(fitJson('a long string', 4)).toBeNull();
    expect(fitJson({ n: 1n }, 2048)).toBeNull();
  });
});
