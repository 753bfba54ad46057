/**
 * Version ranges of MCP server owners (DOMAIN.md §7): which versions of a server an owner receives the fixes of.
 * A range is space-separated comparators (`>=1.2.0 <2.0.0`), all of which a version satisfies, or an x-range (`2.x`),
 * compared in `compareVersions` order. Every range has one canonical text — its tightest lower and upper bound, or
 * `=` one version — so that ranges that mean the same are stored alike and a second owner of one is refused. Pure.
 */
import { compareVersions } from './fix-lifecycle';

/** One end of a range: a version, and whether the version itself is in the range. */
interface Bound {
  readonly version: string;
  readonly inclusive: boolean;
}

/** The versions between two bounds (none: no bound on that side). */
interface VersionInterval {
  readonly lower: Bound | null;
  readonly upper: Bound | null;
}

type Operator = '>=' | '>' | '<=' | '<' | '=';

interface Comparator {
  readonly operator: Operator;
  readonly version: string;
}

/** What every refusal says: the forms a range may take. */
export const VERSION_RANGE_FORMS =
  '"versionRange" must be comparators such as ">=1.2.0 <2" (each >=, >, <=, < or = with a version x.y.z, ' +
  'a pre-release such as 2.0.0-rc.1 allowed; >= and < also take 2 or 2.1) or an x-range such as "2.x" or "2.1.x"';

/** A range as registered: its canonical text, or why it is refused (a sentence to follow `VERSION_RANGE_FORMS`). */
export type ParsedVersionRange =
  | { readonly canonical: string; readonly refusal?: undefined }
  | { readonly canonical?: undefined; readonly refusal: string };

const NUMBER = String.raw`(\d+)`;
const PRERELEASE = String.raw`[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*`;
const COMPARATOR = new RegExp(
  String.raw`^(>=|<=|>|<|=)?${NUMBER}(?:\.${NUMBER}(?:\.${NUMBER})?)?(?:-(${PRERELEASE}))?(\+.*)?$`,
);
/** `2.x`, `2.x.x`, `2.*`, `2.1.x`, `2.1.X`: the versions of one major (or minor) release. */
const X_RANGE = /^(\d+)\.(?:[xX*](?:\.[xX*])?|(\d+)\.[xX*])$/;
const WILDCARD = /^(?:[xX*](?:\.[xX*]){0,2})$/;

/** Digits without leading zeros (digits past 2^53 stay digits). */
const withoutLeadingZeros = (digits: string): string => digits.replace(/^0+(?=\d)/, '');

const nextNumber = (digits: string): string => (BigInt(digits) + 1n).toString();

/**
 * An x-range as bounds: `2.x` is every 2.y.z (and their pre-releases) from 2.0.0 on, up to but not including 3.0.0's
 * first possible pre-release (`3.0.0-0`): a 3.0.0-rc.1 is not a version of 2.x, although it orders before 3.0.0.
 */
function xRangeComparators(major: string, minor: string | undefined): Comparator[] {
  const x = withoutLeadingZeros(major);
  return minor === undefined
    ? [
        { operator: '>=', version: `${x}.0.0` },
        { operator: '<', version: `${nextNumber(x)}.0.0-0` },
      ]
    : [
        { operator: '>=', version: `${x}.${withoutLeadingZeros(minor)}.0` },
        { operator: '<', version: `${x}.${nextNumber(withoutLeadingZeros(minor))}.0-0` },
      ];
}

/** The comparators of one token, or why the token is refused. */
function comparatorsOf(token: string): Comparator[] | string {
  if (WILDCARD.test(token)) return `"${token}" is every version: leave "versionRange" out (null) for that`;
  const xRange = X_RANGE.exec(token);
  if (xRange !== null) return xRangeComparators(xRange[1]!, xRange[2]);
  const match = COMPARATOR.exec(token);
  if (match === null) return `"${token}" is neither`;
  const [, operator = '=', major, minor, patch, prerelease, build] = match;
  if (build !== undefined)
    return `"${token}" has build metadata (${build}), which plays no part in version order: leave it out`;
  const op = operator as Operator;
  if (patch === undefined) {
    // 2 and 2.1 after >= or < mean the same completed with zeros or read as x-ranges; after > <= or = they do not
    // (">2": above 2.0.0, or above every 2.x?), so those take a whole version.
    if (op !== '>=' && op !== '<')
      return `"${token}" could mean one version or a whole release: write x.y.z (e.g. "${op}${major}.${minor ?? '0'}.0") or an x-range ("${major}.${minor === undefined ? '' : `${minor}.`}x")`;
    if (prerelease !== undefined)
      return `"${token}" has a pre-release without a whole version: write x.y.z-${prerelease}`;
  }
  const core = [major!, minor ?? '0', patch ?? '0'].map(withoutLeadingZeros).join('.');
  const pre =
    prerelease === undefined
      ? ''
      : `-${prerelease
          .split('.')
          .map((identifier) => (/^\d+$/.test(identifier) ? withoutLeadingZeros(identifier) : identifier))
          .join('.')}`;
  return [{ operator: op, version: core + pre }];
}

/** The tighter of two lower (or, with `side` -1, upper) bounds. */
function tighter(a: Bound | null, b: Bound, side: 1 | -1): Bound {
  if (a === null) return b;
  const order = compareVersions(a.version, b.version) * side;
  if (order !== 0) return order > 0 ? a : b;
  return a.inclusive ? b : a;
}

/** The versions every comparator admits. */
function intervalOf(comparators: readonly Comparator[]): VersionInterval {
  let lower: Bound | null = null;
  let upper: Bound | null = null;
  for (const { operator, version } of comparators) {
    if (operator === '>=' || operator === '>' || operator === '=')
      lower = tighter(lower, { version, inclusive: operator !== '>' }, 1);
    if (operator === '<=' || operator === '<' || operator === '=')
      upper = tighter(upper, { version, inclusive: operator !== '<' }, -1);
  }
  return { lower, upper };
}

function isEmpty({ lower, upper }: VersionInterval): boolean {
  if (lower === null || upper === null) return false;
  const order = compareVersions(lower.version, upper.version);
  return order > 0 || (order === 0 && !(lower.inclusive && upper.inclusive));
}

function canonicalText({ lower, upper }: VersionInterval): string {
  if (
    lower !== null &&
    upper !== null &&
    lower.inclusive &&
    upper.inclusive &&
    compareVersions(lower.version, upper.version) === 0
  )
    return `=${lower.version}`;
  return [
    lower === null ? null : `${lower.inclusive ? '>=' : '>'}${lower.version}`,
    upper === null ? null : `${upper.inclusive ? '<=' : '<'}${upper.version}`,
  ]
    .filter((part): part is string => part !== null)
    .join(' ');
}

/**
 * A range an owner registers, checked and canonicalised: `>=2.0 <3`, `>=2.0.0  <3.0.0` and `<3 >=2.0.0` are all
 * `>=2.0.0 <3.0.0`; `2.x` is `>=2.0.0 <3.0.0-0`; `=2.1.0` and `2.1.0` are `=2.1.0`. Refused: what is not a
 * comparator or an x-range, a bare `2`, `=2`, `>2` or `<=2` (one version or a whole release?), build metadata, and a
 * range no version satisfies.
 */
export function parseVersionRange(text: string): ParsedVersionRange {
  const tokens = text.trim().split(/\s+/);
  const comparators: Comparator[] = [];
  for (const token of tokens) {
    const parsed = comparatorsOf(token);
    if (typeof parsed === 'string') return { refusal: token === '' ? 'it is empty' : parsed };
    comparators.push(...parsed);
  }
  const interval = intervalOf(comparators);
  if (isEmpty(interval)) return { refusal: `no version is in it (it means ${canonicalText(interval)})` };
  return { canonical: canonicalText(interval) };
}

/** A comparator as owners registered them before ranges were canonicalised: any version text after the operator. */
const STORED_COMPARATOR = /^(>=|<=|>|<|=)?(\d[\w.+-]*)$/;

/**
 * The versions a stored range admits. A canonical range (every range registered since ranges are checked) means what
 * `parseVersionRange` says; an older one is read as it always was, comparator by comparator in `compareVersions`
 * order (`=2` is 2.0.0), except that an x-range such as `2.x`, which then matched no version, now means its release.
 */
function storedInterval(range: string): VersionInterval | null {
  const comparators: Comparator[] = [];
  for (const token of range.trim().split(/\s+/)) {
    const xRange = X_RANGE.exec(token);
    if (xRange !== null) {
      comparators.push(...xRangeComparators(xRange[1]!, xRange[2]));
      continue;
    }
    const match = STORED_COMPARATOR.exec(token);
    if (match === null) return null;
    comparators.push({ operator: (match[1] ?? '=') as Operator, version: match[2]! });
  }
  return intervalOf(comparators);
}

/** Does `version` satisfy a stored range (null: every version; an unknown version satisfies no range)? */
export function inVersionRange(version: string | null, range: string | null): boolean {
  if (range === null) return true;
  if (version === null) return false;
  const interval = storedInterval(range);
  if (interval === null) return false;
  const { lower, upper } = interval;
  const fromLower = lower === null ? 1 : compareVersions(version, lower.version);
  const toUpper = upper === null ? -1 : compareVersions(version, upper.version);
  return (
    (fromLower > 0 || (fromLower === 0 && lower!.inclusive)) &&
    (toUpper < 0 || (toUpper === 0 && upper!.inclusive))
  );
}

/**
 * Do two stored ranges admit the same versions (both null: every version)? Ranges registered before they were
 * canonicalised (`>=2.0 <3`) are compared by what they mean, as a new one is.
 */
export function sameVersionRange(a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  const x = storedInterval(a);
  const y = storedInterval(b);
  if (x === null || y === null) return a.trim() === b.trim();
  if (isEmpty(x) || isEmpty(y)) return isEmpty(x) && isEmpty(y);
  // By order, not text: an older range's bound may be written 2.0 where a canonical one has 2.0.0.
  const sameBound = (p: Bound | null, q: Bound | null) =>
    p === null || q === null
      ? p === q
      : p.inclusive === q.inclusive && compareVersions(p.version, q.version) === 0;
  return sameBound(x.lower, y.lower) && sameBound(x.upper, y.upper);
}
