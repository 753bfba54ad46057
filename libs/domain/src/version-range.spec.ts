import { describe, expect, it } from 'vitest';
import { inVersionRange, parseVersionRange, sameVersionRange } from './version-range';

const canonical = (range: string) => parseVersionRange(range).canonical;
const refusal = (range: string) => parseVersionRange(range).refusal;

describe('parseVersionRange', () => {
  it('gives ranges that mean the same one text: whitespace, missing .0 parts and order do not count', () => {
    for (const range of [
      '>=2.0.0 <3',
      ' >=2.0.0 <3',
      '>=2.0.0  <3',
      '>=2.0 <3.0.0',
      '>=2\t<3.0',
      '<3 >=2.0.0',
      '>=02.0.0 <3.0.0',
      '>=1.0.0 >=2.0.0 <4.0.0 <3.0.0',
    ])
      expect(canonical(range), range).toBe('>=2.0.0 <3.0.0');
    expect(canonical('>=1.2.0 <2')).toBe('>=1.2.0 <2.0.0');
    expect(canonical('2.1.0')).toBe('=2.1.0');
    expect(canonical('=2.1.0')).toBe('=2.1.0');
    expect(canonical('>=2.1.0 <=2.1.0')).toBe('=2.1.0');
    expect(canonical('>2.0.0 >=2.0.0')).toBe('>2.0.0');
    expect(canonical('<=3.0.0 <3.0.0')).toBe('<3.0.0');
    expect(canonical('>=2.0.0-rc.01 <2.0.0')).toBe('>=2.0.0-rc.1 <2.0.0');
  });

  it('takes x-ranges as the versions of one release, pre-releases of the next excluded', () => {
    for (const range of ['2.x', '2.X', '2.*', '2.x.x'])
      expect(canonical(range), range).toBe('>=2.0.0 <3.0.0-0');
    expect(canonical('2.1.x')).toBe('>=2.1.0 <2.2.0-0');
    expect(canonical('2.x >=2.5.0')).toBe('>=2.5.0 <3.0.0-0');
    expect(canonical('2.x')).toBe(canonical('2.*'));
  });

  it('refuses what is not a comparator or an x-range, saying what is wrong', () => {
    expect(refusal('latest')).toBe('"latest" is neither');
    expect(refusal('^1.2.0')).toBe('"^1.2.0" is neither');
    expect(refusal('~1.2')).toBe('"~1.2" is neither');
    expect(refusal('1.0.0 - 2.0.0')).toBe('"-" is neither');
    expect(refusal('>=1.0.0 || <0.5.0')).toBe('"||" is neither');
    expect(refusal('v2.0.0')).toBe('"v2.0.0" is neither');
    expect(refusal('>=2.x')).toBe('">=2.x" is neither');
    expect(refusal('')).toBe('it is empty');
    expect(refusal('*')).toMatch(/every version: leave "versionRange" out/);
    expect(refusal('>=1.0.0+build.5')).toMatch(/build metadata \(\+build\.5\)/);
  });

  it('refuses a release number where one version and a whole release read differently', () => {
    // ">2": above 2.0.0, or above every 2.x? "=2": 2.0.0, or any 2.x?
    for (const range of ['2', '=2', '>2', '<=2', '=2.1', '>2.1'])
      expect(refusal(range), range).toMatch(/could mean one version or a whole release: write x\.y\.z/);
    expect(refusal('>2')).toContain('">2.0.0"');
    expect(refusal('2.1')).toContain('"2.1.x"');
    expect(refusal('>=2-rc.1')).toMatch(/pre-release without a whole version/);
  });

  it('refuses a range no version is in', () => {
    expect(refusal('>=3.0.0 <2.0.0')).toBe('no version is in it (it means >=3.0.0 <2.0.0)');
    expect(refusal('>2.0.0 <=2.0.0')).toMatch(/no version is in it/);
    expect(refusal('=2.0.0 =2.1.0')).toMatch(/no version is in it/);
  });
});

describe('inVersionRange', () => {
  it('matches a canonical range as it reads, in semantic-version order', () => {
    const range = canonical('>=2.0 <3')!;
    expect(
      ['1.9.9', '2.0.0-rc.1', '2.0.0', '2.10.1', '3.0.0-rc.1', '3.0.0'].filter((v) =>
        inVersionRange(v, range),
      ),
    ).toEqual(['2.0.0', '2.10.1', '3.0.0-rc.1']);
    const release = canonical('2.x')!;
    expect(
      ['1.9.9', '2.0.0', '2.1.0', '2.99.0-beta', '3.0.0-rc.1', '3.0.0'].filter((v) =>
        inVersionRange(v, release),
      ),
    ).toEqual(['2.0.0', '2.1.0', '2.99.0-beta']);
    expect(inVersionRange(null, range)).toBe(false);
    expect(inVersionRange(null, null)).toBe(true);
    expect(inVersionRange('9.9.9', null)).toBe(true);
  });

  it('reads a range stored before ranges were canonicalised as it always did, an x-range as its release', () => {
    expect(inVersionRange('2.0.0', '=2')).toBe(true);
    expect(inVersionRange('2.1.0', '=2')).toBe(false);
    expect(inVersionRange('2.0.1', '>2')).toBe(true);
    expect(inVersionRange('2.5.0', '  >=2.0  <3 ')).toBe(true);
    expect(inVersionRange('1.0.0+build.9', '>=1.0.0+build.5 <2')).toBe(true);
    // 2.x matched no version then: it was compared with "2.x" as text
    expect(inVersionRange('2.1.0', '2.x')).toBe(true);
    expect(inVersionRange('3.0.0', '2.x')).toBe(false);
  });
});

describe('sameVersionRange', () => {
  it('tells ranges that mean the same, also one stored before ranges were canonicalised', () => {
    expect(sameVersionRange('>=2.0.0 <3.0.0', canonical('>=2.0 <3')!)).toBe(true);
    expect(sameVersionRange('>=2.0.0  <3', '>=2.0.0 <3.0.0')).toBe(true);
    expect(sameVersionRange('2.x', '>=2.0.0 <3.0.0-0')).toBe(true);
    expect(sameVersionRange('=2', '=2.0.0')).toBe(true);
    expect(sameVersionRange('>=2.0.0 <3.0.0', '>=2.0.0 <3.0.0-0')).toBe(false);
    expect(sameVersionRange('>=2.0.0', '>2.0.0')).toBe(false);
    expect(sameVersionRange(null, null)).toBe(true);
    expect(sameVersionRange(null, '>=0.0.0')).toBe(false);
  });
});
