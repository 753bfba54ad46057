/**
 * A finding's fix as events (DOMAIN.md §7): suggested → delivered (to the owner's endpoint) → acknowledged (by the
 * owner) → verified (a newer server version stopped violating the rule) or regressed (it came back, which re-opens
 * the fix). Pure: `evolveFix` folds events into the fix, `decideFromTraffic` reads later traffic per server version,
 * `decideOnDelivery` what a message the owner's endpoint took means for the fix, `decideAcknowledgement` what the
 * owner saying so does.
 */
import type { FindingRule } from './rules';

export type FixEvent =
  | {
      readonly type: 'FixSuggested';
      readonly data: {
        readonly findingId: string;
        readonly server: string | null;
        readonly tool: string;
        readonly rule: FindingRule;
        /** Server versions seen violating the rule when the fix was suggested. */
        readonly versions: readonly string[];
        readonly at: string;
      };
    }
  | {
      readonly type: 'FixDelivered';
      readonly data: { readonly findingId: string; readonly ownerId: string; readonly at: string };
    }
  | {
      readonly type: 'FixAcknowledged';
      readonly data: { readonly findingId: string; readonly by: string; readonly at: string };
    }
  | {
      readonly type: 'FixVerified';
      readonly data: {
        readonly findingId: string;
        readonly version: string;
        readonly calls: number;
        /**
         * Versions seen violating the rule since the suggestion (all older than `version`): the fix's bad versions
         * gain them. Absent from verifications recorded before they were kept.
         */
        readonly badVersions?: readonly string[];
        readonly at: string;
      };
    }
  | {
      readonly type: 'FixRegressed';
      readonly data: {
        readonly findingId: string;
        readonly version: string;
        readonly offences: number;
        readonly at: string;
      };
    };

/** The events a webhook tells the owners about: the suggestion, a verification, a regression. */
export type FixNews = Extract<FixEvent, { type: 'FixSuggested' | 'FixVerified' | 'FixRegressed' }>;

export function isFixNews(event: FixEvent): event is FixNews {
  return event.type === 'FixSuggested' || event.type === 'FixVerified' || event.type === 'FixRegressed';
}

/** Where a fix stands, in lifecycle order. */
export const FIX_STATES = ['suggested', 'delivered', 'acknowledged', 'verified', 'regressed'] as const;
export type FixState = (typeof FIX_STATES)[number];

export interface Fix {
  readonly findingId: string;
  readonly server: string | null;
  readonly tool: string;
  readonly rule: FindingRule;
  readonly state: FixState;
  /** Versions seen violating the rule: when it was suggested, then before its verification, and on regressing. */
  readonly badVersions: readonly string[];
  readonly suggestedAt: string;
  readonly deliveredAt: string | null;
  readonly acknowledgedAt: string | null;
  readonly acknowledgedBy: string | null;
  readonly verifiedAt: string | null;
  readonly verifiedVersion: string | null;
  readonly regressedAt: string | null;
}

/** Folds one event into the fix; events other than FixSuggested need the fix to exist. */
export function evolveFix(fix: Fix | null, event: FixEvent): Fix {
  if (event.type === 'FixSuggested') {
    const { findingId, server, tool, rule, versions, at } = event.data;
    return {
      findingId,
      server,
      tool,
      rule,
      state: 'suggested',
      badVersions: [...versions].sort(compareVersions),
      suggestedAt: at,
      deliveredAt: null,
      acknowledgedAt: null,
      acknowledgedBy: null,
      verifiedAt: null,
      verifiedVersion: null,
      regressedAt: null,
    };
  }
  if (fix === null) throw new Error(`${event.type} for ${event.data.findingId} before FixSuggested`);
  // Verified stands until traffic says the fix regressed: a suggestion delivered late (the owner's endpoint was
  // down, or an admin redelivered it) or an acknowledgement after the fact is recorded, but does not re-open the fix,
  // which would stop Errata watching for a relapse.
  const verified = fix.state === 'verified';
  switch (event.type) {
    case 'FixDelivered':
      // A re-notification after a regression is a delivery too; it does not undo an acknowledgement's record.
      return {
        ...fix,
        state: verified || fix.state === 'acknowledged' ? fix.state : 'delivered',
        deliveredAt: event.data.at,
      };
    case 'FixAcknowledged':
      return {
        ...fix,
        state: verified ? 'verified' : 'acknowledged',
        acknowledgedAt: event.data.at,
        acknowledgedBy: event.data.by,
      };
    case 'FixVerified':
      return {
        ...fix,
        state: 'verified',
        verifiedAt: event.data.at,
        verifiedVersion: event.data.version,
        badVersions: withVersions(fix.badVersions, event.data.badVersions ?? []),
      };
    case 'FixRegressed':
      return {
        ...fix,
        state: 'regressed',
        regressedAt: event.data.at,
        badVersions: withVersions(fix.badVersions, [event.data.version]),
        acknowledgedAt: null,
        acknowledgedBy: null,
      };
  }
}

/** The fix a finding's events, oldest first, fold into; null before its suggestion. */
export function foldFix(events: readonly FixEvent[]): Fix | null {
  return events.reduce<Fix | null>((fix, event) => evolveFix(fix, event), null);
}

/**
 * The fix's latest news (its suggestion, verification or regression) and the fix as that event left it: what the
 * message telling it said, whatever happened since. Null before any.
 */
export function latestNews(history: readonly FixEvent[]): { news: FixNews; fix: Fix } | null {
  for (let i = history.length - 1; i >= 0; i--) {
    const event = history[i]!;
    if (isFixNews(event)) return { news: event, fix: foldFix(history.slice(0, i + 1))! };
  }
  return null;
}

function withVersions(versions: readonly string[], more: readonly string[]): string[] {
  return [...new Set([...versions, ...more])].sort(compareVersions);
}

/**
 * What the owner's endpoint taking a message with `delivered` means for the fix, given its events so far: FixDelivered
 * when the message told the fix as it was last opened (its suggestion, or the regression that re-opened it), else
 * nothing. A verification is only news. An older opening is old news: the suggestion redelivered by an admin, or
 * landing after long retries, while the regression's message still waits, would otherwise mark the regressed fix
 * delivered although its owner has not heard that it regressed.
 */
export function decideOnDelivery(
  history: readonly FixEvent[],
  delivered: FixNews,
  receipt: { readonly ownerId: string; readonly at: string },
): FixEvent | null {
  if (delivered.type === 'FixVerified') return null;
  const latestOpening = history
    .filter((event) => event.type === 'FixSuggested' || event.type === 'FixRegressed')
    .at(-1);
  if (latestOpening === undefined || !sameNews(latestOpening, delivered)) return null;
  return { type: 'FixDelivered', data: { findingId: delivered.data.findingId, ...receipt } };
}

/**
 * An acknowledgement of the fix as it stands: FixAcknowledged, or nothing when the owner has acknowledged it since it
 * was last opened (a regression clears the acknowledgement). Saying so twice is one acknowledgement: the first's who
 * and when stand, and the log does not grow with every repeated click or retried request.
 */
export function decideAcknowledgement(
  fix: Fix,
  acknowledgement: { readonly by: string; readonly at: string },
): FixEvent | null {
  if (fix.acknowledgedAt !== null) return null;
  return { type: 'FixAcknowledged', data: { findingId: fix.findingId, ...acknowledgement } };
}

/** One fix has one suggestion, and at most one verification and one regression per version. */
function sameNews(a: FixEvent, b: FixEvent): boolean {
  const versionOf = (event: FixEvent) => ('version' in event.data ? event.data.version : null);
  return a.type === b.type && versionOf(a) === versionOf(b);
}

/**
 * Calls of the finding's tool, those of them that failed, and offences of its rule, per server version, over the
 * traffic considered.
 */
export interface VersionTraffic {
  readonly version: string;
  readonly calls: number;
  readonly failures: number;
  readonly offences: number;
}

/**
 * A version's calls on which the rule could have been broken: its successes for failure-as-empty (a failure
 * reported as a success), its failures for every other rule (each is about how a failure is reported). A version
 * that never failed says nothing of how it reports failures, however many calls it had.
 */
export function chancesToOffend(rule: FindingRule, traffic: VersionTraffic): number {
  return rule === 'failure-as-empty' ? traffic.calls - traffic.failures : traffic.failures;
}

export interface VerificationOptions {
  /** Calls a clean version needs before it counts as fixed (one of them at least a chance to break the rule). */
  readonly minCalls: number;
  readonly now: string;
}

/**
 * What later traffic says about a fix. Not verified yet: the newest version that is newer than every version seen
 * violating the rule, with at least `minCalls` calls, at least one of them a chance to break the rule
 * (`chancesToOffend`), and no offence, verifies it. Verified: an offence in the verified version or a newer one is a
 * regression.
 */
export function decideFromTraffic(
  fix: Fix,
  traffic: readonly VersionTraffic[],
  options: VerificationOptions,
): FixEvent | null {
  const { findingId } = fix;
  if (fix.state === 'verified') {
    const relapse = traffic
      .filter((v) => v.offences > 0 && compareVersions(v.version, fix.verifiedVersion!) >= 0)
      .sort((a, b) => compareVersions(a.version, b.version))[0];
    return relapse === undefined
      ? null
      : {
          type: 'FixRegressed',
          data: { findingId, version: relapse.version, offences: relapse.offences, at: options.now },
        };
  }
  // A version that violated the rule after the suggestion is as bad as the ones it was suggested for: the fix must be
  // newer than it too, and the verification names it, so that the owner's badVersions says why it took that long.
  const offending = traffic
    .filter((v) => v.offences > 0)
    .map((v) => v.version)
    .sort(compareVersions);
  const newestBad = [...fix.badVersions, ...offending].sort(compareVersions).at(-1);
  const clean = traffic
    .filter(
      (v) =>
        v.offences === 0 &&
        v.calls >= options.minCalls &&
        chancesToOffend(fix.rule, v) > 0 &&
        (newestBad === undefined || compareVersions(v.version, newestBad) > 0),
    )
    .sort((a, b) => compareVersions(a.version, b.version))
    .at(-1);
  return clean === undefined
    ? null
    : {
        type: 'FixVerified',
        data: {
          findingId,
          version: clean.version,
          calls: clean.calls,
          badVersions: offending,
          at: options.now,
        },
      };
}

/**
 * Version order, as semantic versioning orders them: dot-separated numeric parts compared as numbers (1.10 after
 * 1.9, a missing part is 0), a pre-release (`-rc.1`) before its release and pre-releases by their dot-separated
 * identifiers (rc.10 after rc.9, alpha before alpha.1), build metadata (`+build.5`) ignored, anything else compared as
 * text.
 */
export function compareVersions(a: string, b: string): number {
  const x = parseVersion(a);
  const y = parseVersion(b);
  const byCore = compareIdentifiers(x.core, y.core, '0');
  if (byCore !== 0) return byCore;
  if (x.pre === null || y.pre === null) return x.pre === y.pre ? 0 : x.pre === null ? 1 : -1;
  return compareIdentifiers(x.pre, y.pre, null);
}

function parseVersion(version: string): { core: string[]; pre: string[] | null } {
  const plus = version.indexOf('+');
  const precedence = plus < 0 ? version : version.slice(0, plus);
  const dash = precedence.indexOf('-');
  return dash < 0
    ? { core: precedence.split('.'), pre: null }
    : { core: precedence.slice(0, dash).split('.'), pre: precedence.slice(dash + 1).split('.') };
}

/**
 * Identifiers in turn: two numeric ones by value, a numeric one before any other, the rest as text. A missing
 * identifier is `missing`, or (null) comes before any: `alpha` before `alpha.1`.
 */
function compareIdentifiers(x: readonly string[], y: readonly string[], missing: string | null): number {
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const p = x[i] ?? missing;
    const q = y[i] ?? missing;
    if (p === null || q === null) return p === null ? -1 : 1;
    const order = compareIdentifier(p, q);
    if (order !== 0) return order;
  }
  return 0;
}

const NUMERIC = /^\d+$/;

function compareIdentifier(p: string, q: string): number {
  const pNumeric = NUMERIC.test(p);
  const qNumeric = NUMERIC.test(q);
  if (pNumeric && qNumeric) {
    // By length first, without leading zeros: digits past 2^53 are no longer told apart by Number.
    const pDigits = p.replace(/^0+(?=\d)/, '');
    const qDigits = q.replace(/^0+(?=\d)/, '');
    if (pDigits.length !== qDigits.length) return pDigits.length < qDigits.length ? -1 : 1;
    return pDigits < qDigits ? -1 : pDigits > qDigits ? 1 : 0;
  }
  if (pNumeric !== qNumeric) return pNumeric ? -1 : 1;
  return p < q ? -1 : p > q ? 1 : 0;
}
