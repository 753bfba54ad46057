import { describe, expect, it } from 'vitest';
import { isConnectionFailure, isDatabaseUnavailable } from './database-unavailable';

const failure = (message: string, code?: string) => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it("is true of a database host whose name does not resolve just now (a compose service's container restarting)", () => {
    expect(isDatabaseUnavailable(failure('getaddrinfo ENOTFOUND postgres', 'ENOTFOUND'))).toBe(true);
    expect(isDatabaseUnavailable(failure('getaddrinfo EAI_AGAIN postgres', 'EAI_AGAIN'))).toBe(true);
  });

  it('is true of a database not accepting connections, but not of every error of its class (55000)', () => {
    const closed = failure('database "errata" is not currently accepting connections', '55000');
    expect(isDatabaseUnavailable(closed)).toBe(true);
    expect(
      isDatabaseUnavailable(failure('currval of sequence "s" is not yet defined in this session', '55000')),
    ).toBe(false);
  });

  it("is true of pg's own timeouts: no answer within query_timeout (a stalled network path), none to a connect", () => {
    expect(isDatabaseUnavailable(new Error('Query read timeout'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection terminated due to connection timeout'))).toBe(true);
  });

  it('is false of a statement cut off by statement_timeout: the same request can meet it every time', () => {
    expect(isDatabaseUnavailable(failure('canceling statement due to statement timeout', '57014'))).toBe(
      false,
    );
  });
});

describe('isConnectionFailure', () => {
  it('is true of a connection refused for good at connect time: no such database, a wrong password', () => {
    expect(isConnectionFailure(failure('database "nope" does not exist', '3D000'))).toBe(true);
    expect(isConnectionFailure(failure('password authentication failed', '28P01'))).toBe(true);
    expect(isConnectionFailure(failure('syntax error', '42601'))).toBe(false);
  });
});
