import { describe, expect, it } from 'vitest';
import {
  compareVersions,
  decideAcknowledgement,
  decideFromTraffic,
  decideOnDelivery,
  evolveFix,
  latestNews,
  type Fix,
  type FixEvent,
  type FixNews,
} from './fix-lifecycle';

const AT = '2026-11-30T10:00:00.000Z';
const suggested: FixNews = {
  type: 'FixSuggested',
  data: {
    findingId: 'f1',
    server: 'orders',
    tool: 'search',
    rule: 'untyped-error',
    versions: ['1.2.0'],
    at: AT,
  },
};
const given = (...events: FixEvent[]): Fix => events.reduce<Fix | null>(evolveFix, null)!;
const options = { minCalls: 20, now: AT };

describe('fix lifecycle', () => {
  it('given news then a delivery and an acknowledgement, the latest news is told with the fix as it left it', () => {
    const regressed: FixNews = {
      type: 'FixRegressed',
      data: { findingId: 'f1', version: '1.3.0', offences: 1, at: AT },
    };
    const history: FixEvent[] = [
      suggested,
      { type: 'FixDelivered', data: { findingId: 'f1', ownerId: 'o1', at: AT } },
      { type: 'FixVerified', data: { findingId: 'f1', version: '1.3.0', calls: 20, at: AT } },
      regressed,
      { type: 'FixDelivered', data: { findingId: 'f1', ownerId: 'o1', at: AT } },
      { type: 'FixAcknowledged', data: { findingId: 'f1', by: 'api', at: AT } },
    ];
    expect(latestNews(history)).toEqual({ news: regressed, fix: given(...history.slice(0, 4)) });
    expect(latestNews(history)!.fix).toMatchObject({ state: 'regressed', acknowledgedAt: null });
    expect(latestNews(history.slice(0, 2))).toEqual({ news: suggested, fix: given(suggested) });
    expect(latestNews([])).toBeNull();
  });

  it('given suggested, delivered and acknowledged, the fix is acknowledged with who and when', () => {
    const fix = given(
      suggested,
      { type: 'FixDelivered', data: { findingId: 'f1', ownerId: 'o1', at: AT } },
      { type: 'FixAcknowledged', data: { findingId: 'f1', by: 'cli', at: AT } },
    );
    expect(fix).toMatchObject({ state: 'acknowledged', acknowledgedBy: 'cli', badVersions: ['1.2.0'] });
  });

  it('given a newer version with enough calls and no offence, when traffic is read, then verified', () => {
    const fix = given(suggested);
    expect(
      decideFromTraffic(
        fix,
        [
          { version: '1.2.0', calls: 100, failures: 100, offences: 30 },
          { version: '1.3.0', calls: 25, failures: 25, offences: 0 },
        ],
        options,
      ),
    ).toEqual({
      type: 'FixVerified',
      data: { findingId: 'f1', version: '1.3.0', calls: 25, badVersions: ['1.2.0'], at: AT },
    });
  });

  it('given a version that violated the rule after the suggestion, then a clean newer one, verified naming it a bad version', () => {
    const fix = given(suggested);
    const traffic = [
      { version: '1.4.0', calls: 50, failures: 50, offences: 2 },
      { version: '1.3.0', calls: 50, failures: 50, offences: 0 }, // clean, but older than 1.4.0
      { version: '1.5.0', calls: 20, failures: 20, offences: 0 },
    ];
    const verified = decideFromTraffic(fix, traffic, options);
    expect(verified).toMatchObject({
      type: 'FixVerified',
      data: { version: '1.5.0', badVersions: ['1.4.0'] },
    });
    expect(evolveFix(fix, verified!)).toMatchObject({ state: 'verified', badVersions: ['1.2.0', '1.4.0'] });
    // A verification recorded before its bad versions were kept folds as it did
    const { badVersions: _kept, ...recorded } = (verified as Extract<FixEvent, { type: 'FixVerified' }>).data;
    expect(evolveFix(fix, { type: 'FixVerified', data: recorded }).badVersions).toEqual(['1.2.0']);
  });

  it('given too few calls of the new version, or an older clean version, then nothing is decided', () => {
    const fix = given(suggested);
    expect(
      decideFromTraffic(fix, [{ version: '1.3.0', calls: 19, failures: 19, offences: 0 }], options),
    ).toBeNull();
    expect(
      decideFromTraffic(fix, [{ version: '1.1.0', calls: 500, failures: 500, offences: 0 }], options),
    ).toBeNull();
  });

  it('given a newer version that never had a chance to break the rule, then not verified, however many its calls', () => {
    // untyped-error is about how failures are reported: a version that never failed says nothing of it
    expect(
      decideFromTraffic(
        given(suggested),
        [{ version: '1.3.0', calls: 500, failures: 0, offences: 0 }],
        options,
      ),
    ).toBeNull();
    expect(
      decideFromTraffic(
        given(suggested),
        [{ version: '1.3.0', calls: 500, failures: 1, offences: 0 }],
        options,
      ),
    ).toMatchObject({ type: 'FixVerified', data: { version: '1.3.0', calls: 500 } });
    // failure-as-empty is about failures reported as successes: a version that only failed says nothing of it
    const asEmpty = given({
      ...suggested,
      data: { ...suggested.data, rule: 'failure-as-empty' },
    } as FixEvent);
    expect(
      decideFromTraffic(asEmpty, [{ version: '1.3.0', calls: 40, failures: 40, offences: 0 }], options),
    ).toBeNull();
    expect(
      decideFromTraffic(asEmpty, [{ version: '1.3.0', calls: 40, failures: 39, offences: 0 }], options),
    ).toMatchObject({ type: 'FixVerified' });
  });

  it('given a clean version older than a version still violating, then not verified', () => {
    const fix = given(suggested);
    const traffic = [
      { version: '1.3.0', calls: 50, failures: 50, offences: 0 },
      { version: '1.4.0', calls: 50, failures: 50, offences: 2 },
    ];
    expect(decideFromTraffic(fix, traffic, options)).toBeNull();
  });

  it('given verified, when the verified version or a newer one violates again, then regressed, and re-opened', () => {
    const verified = given(suggested, {
      type: 'FixVerified',
      data: { findingId: 'f1', version: '1.3.0', calls: 25, at: AT },
    });
    expect(
      decideFromTraffic(verified, [{ version: '1.2.0', calls: 5, failures: 5, offences: 5 }], options),
    ).toBeNull();
    const regressed = decideFromTraffic(
      verified,
      [{ version: '1.10.0', calls: 5, failures: 5, offences: 1 }],
      options,
    );
    expect(regressed).toEqual({
      type: 'FixRegressed',
      data: { findingId: 'f1', version: '1.10.0', offences: 1, at: AT },
    });
    expect(evolveFix(verified, regressed!)).toMatchObject({
      state: 'regressed',
      badVersions: ['1.2.0', '1.10.0'],
    });
  });

  it('given verified, a late delivery or an acknowledgement is recorded, the fix stays verified and a relapse still regresses it', () => {
    const verifiedEvent: FixEvent = {
      type: 'FixVerified',
      data: { findingId: 'f1', version: '1.3.0', calls: 25, at: AT },
    };
    const later = '2026-11-30T11:00:00.000Z';
    for (const after of [
      { type: 'FixDelivered', data: { findingId: 'f1', ownerId: 'o1', at: later } },
      { type: 'FixAcknowledged', data: { findingId: 'f1', by: 'cli', at: later } },
    ] as FixEvent[]) {
      const fix = given(suggested, verifiedEvent, after);
      expect(fix).toMatchObject({ state: 'verified', verifiedVersion: '1.3.0', verifiedAt: AT });
      expect(after.type === 'FixDelivered' ? fix.deliveredAt : fix.acknowledgedAt).toBe(later);
      expect(
        decideFromTraffic(fix, [{ version: '1.3.0', calls: 25, failures: 25, offences: 0 }], options),
      ).toBeNull();
      expect(
        decideFromTraffic(fix, [{ version: '1.3.0', calls: 30, failures: 30, offences: 4 }], options),
      ).toMatchObject({
        type: 'FixRegressed',
        data: { version: '1.3.0', offences: 4 },
      });
    }
  });

  describe('when the owner acknowledges the fix', () => {
    const acknowledgement = { by: 'api', at: '2026-11-30T11:00:00.000Z' };
    const acknowledged: FixEvent = { type: 'FixAcknowledged', data: { findingId: 'f1', by: 'cli', at: AT } };
    const delivered: FixEvent = { type: 'FixDelivered', data: { findingId: 'f1', ownerId: 'o1', at: AT } };

    it('given suggested or delivered, then FixAcknowledged with who and when', () => {
      for (const fix of [given(suggested), given(suggested, delivered)]) {
        expect(decideAcknowledgement(fix, acknowledgement)).toEqual({
          type: 'FixAcknowledged',
          data: { findingId: 'f1', ...acknowledgement },
        });
      }
    });

    it('given acknowledged already, verified since or not, then nothing: the first acknowledgement stands', () => {
      const verified: FixEvent = {
        type: 'FixVerified',
        data: { findingId: 'f1', version: '1.3.0', calls: 20, at: AT },
      };
      expect(decideAcknowledgement(given(suggested, delivered, acknowledged), acknowledgement)).toBeNull();
      expect(decideAcknowledgement(given(suggested, acknowledged, verified), acknowledgement)).toBeNull();
    });

    it('given acknowledged before the message was recorded as delivered, the delivery does not undo it', () => {
      const later = { ...delivered, data: { ...delivered.data, at: '2026-11-30T12:00:00.000Z' } } as FixEvent;
      expect(given(suggested, acknowledged, later)).toMatchObject({
        state: 'acknowledged',
        acknowledgedBy: 'cli',
        acknowledgedAt: AT,
        deliveredAt: '2026-11-30T12:00:00.000Z',
      });
    });

    it('given acknowledged, then regressed, then FixAcknowledged again: the regression re-opened the fix', () => {
      const regressed: FixEvent = {
        type: 'FixRegressed',
        data: { findingId: 'f1', version: '1.3.0', offences: 1, at: AT },
      };
      const verified: FixEvent = {
        type: 'FixVerified',
        data: { findingId: 'f1', version: '1.3.0', calls: 20, at: AT },
      };
      const fix = given(suggested, delivered, acknowledged, verified, regressed, delivered);
      expect(decideAcknowledgement(fix, acknowledgement)).toMatchObject({ type: 'FixAcknowledged' });
    });
  });

  describe("when the owner's endpoint takes a message", () => {
    const verifiedIn = (version: string): FixNews => ({
      type: 'FixVerified',
      data: { findingId: 'f1', version, calls: 25, at: AT },
    });
    const regressedIn = (version: string): FixNews => ({
      type: 'FixRegressed',
      data: { findingId: 'f1', version, offences: 1, at: AT },
    });
    const receipt = { ownerId: 'o1', at: '2026-11-30T12:00:00.000Z' };
    const deliveredFix = { type: 'FixDelivered', data: { findingId: 'f1', ...receipt } };

    it('given a suggested fix, when its suggestion is delivered, then the fix is delivered', () => {
      const history = [suggested];
      const decided = decideOnDelivery(history, suggested, receipt);
      expect(decided).toEqual(deliveredFix);
      expect(given(...history, decided!).state).toBe('delivered');
    });

    it('given a regressed fix, when the older suggestion is delivered (redelivered, or late), then nothing: it stays regressed', () => {
      const history = [suggested, verifiedIn('1.3.0'), regressedIn('1.3.0')];
      expect(decideOnDelivery(history, suggested, receipt)).toBeNull();
      expect(given(...history).state).toBe('regressed');
    });

    it('given a regressed fix, when the regression is delivered, then the fix is delivered again', () => {
      const history = [suggested, verifiedIn('1.3.0'), regressedIn('1.3.0')];
      const decided = decideOnDelivery(history, regressedIn('1.3.0'), receipt);
      expect(decided).toEqual(deliveredFix);
      expect(given(...history, decided!)).toMatchObject({ state: 'delivered', regressedAt: AT });
    });

    it('given a second regression, when the first one is delivered, then nothing: only the latest re-opening counts', () => {
      const history = [
        suggested,
        verifiedIn('1.3.0'),
        regressedIn('1.3.0'),
        verifiedIn('1.4.0'),
        regressedIn('1.5.0'),
      ];
      expect(decideOnDelivery(history, regressedIn('1.3.0'), receipt)).toBeNull();
      expect(decideOnDelivery(history, regressedIn('1.5.0'), receipt)).toEqual(deliveredFix);
    });

    it('given a verified fix, when the suggestion lands late, then it is recorded and the fix stays verified', () => {
      const history = [suggested, verifiedIn('1.3.0')];
      const decided = decideOnDelivery(history, suggested, receipt);
      expect(decided).toEqual(deliveredFix);
      expect(given(...history, decided!)).toMatchObject({ state: 'verified', deliveredAt: receipt.at });
    });

    it('given any fix, when a verification is delivered, then nothing: a verification is only news', () => {
      expect(decideOnDelivery([suggested, verifiedIn('1.3.0')], verifiedIn('1.3.0'), receipt)).toBeNull();
    });
  });

  it('orders versions numerically, a pre-release before its release', () => {
    expect(['1.10.0', '1.9.2', '1.9.2-rc1', '2.0', '1.9.10'].sort(compareVersions)).toEqual([
      '1.9.2-rc1',
      '1.9.2',
      '1.9.10',
      '1.10.0',
      '2.0',
    ]);
  });

  it('orders pre-releases by their identifiers, as semantic versioning does; build metadata does not order', () => {
    // The example of semver.org §11, shuffled: rc.10 sorted before rc.9 as text, and a fix shipped in rc.10 of a
    // server whose rc.9 violated the rule was never verified.
    const ordered = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0-rc.9',
      '1.0.0-rc.10',
      '1.0.0',
      '1.0.1',
    ];
    expect([...ordered].reverse().sort(compareVersions)).toEqual(ordered);
    expect(compareVersions('2.0.0-rc.10', '2.0.0-rc.9')).toBe(1);
    expect(compareVersions('1.0.0+build.2', '1.0.0+build.10')).toBe(0);
    expect(compareVersions('1.0.0-rc.1+build.2', '1.0.0-rc.1')).toBe(0);
    expect(compareVersions('1.0.0-1', '1.0.0-alpha')).toBe(-1);
    expect(compareVersions('1.0.0-rc.00010', '1.0.0-rc.9')).toBe(1);
    expect(compareVersions('1.0.0-rc.123456789012345678901', '1.0.0-rc.123456789012345678900')).toBe(1);
  });

  it('given a fix for a violation in 2.0.0-rc.9, when 2.0.0-rc.10 runs clean, then it is verified in rc.10', () => {
    const fix = given({ ...suggested, data: { ...suggested.data, versions: ['2.0.0-rc.9'] } } as FixEvent);
    const decided = decideFromTraffic(
      fix,
      [
        { version: '2.0.0-rc.9', calls: 40, failures: 40, offences: 12 },
        { version: '2.0.0-rc.10', calls: 25, failures: 25, offences: 0 },
      ],
      options,
    );
    expect(decided).toMatchObject({ type: 'FixVerified', data: { version: '2.0.0-rc.10' } });
  });
});
