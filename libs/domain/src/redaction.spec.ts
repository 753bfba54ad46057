import { describe, expect, it } from 'vitest';

import {
  redact,
  redactIdentifier,
  redactPayload,
  storedText,
  truncateUtf8,
  utf8ByteLength,
} from './redaction';
import { REDACTED_TEXTS, UNTOUCHED_TEXTS } from './redaction-cases.spec-helper';

describe('redact', () => {
  it.each(REDACTED_TEXTS)(
    'given a %s, when redacted, then it is replaced by a stable placeholder',
    (_kind, input, expected) => {
      expect(redact(input)).toBe(expected);
    },
  );

  it.each(UNTOUCHED_TEXTS)('given normal text %j, when redacted, then it is untouched', (text) => {
    expect(redact(text)).toBe(text);
  });

  it('is idempotent', () => {
    const text =
      'Bearer abc123DEF456 postgres://u:p4ss@h/db password=x1 jane@example.com 12345678 sk-aaaaaaaaaaaaaaaaaaaa ' +
      'Authorization: Bearer QwErTyUiOpAsDfGhJk AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7 bob\\u0040example.com ' +
      'Authorization=Bearer%20GAPbearerToken1234 password="a b c" pwd: \'d e\'\nCookie: a=b; c=d\n';
    const once = redact(text);
    expect(redact(once)).toBe(once);
  });

  it.each([
    ['a number that ended a word before Bearer', '12345678901Bearer abcdefgh12345'],
    ['a number that ended a domain', 'mail a@b.co12345678901 now'],
  ])('is idempotent on %s', (_case, text) => {
    const once = redact(text);
    expect(redact(once)).toBe(once);
  });

  it('leaves a quoted value redacted already as it is, one that a cut left unclosed too', () => {
    for (const text of [
      '{"api_key":"[REDACTED:secret]"}',
      '{"api_key":"[REDACTED:secret]',
      "'pwd': '[REDACTED:password]",
    ])
      expect(redact(text)).toBe(text);
  });
});

describe('redact on adversarial texts of 100 KB', () => {
  // Each case made one of the patterns backtrack over the whole text from every position (quadratic: seconds).
  it.each([
    ['a long dotted run before "://" (URL_PASSWORD)', `${'a.'.repeat(50_000)}://`],
    ['opening quotes after secret keys', 'password="'.repeat(10_000)],
    ['quoted values never closed', `${'pwd="a'.repeat(16_000)}\n`],
  ])('%s takes time linear in the text', (_case, text) => {
    const started = performance.now();
    redact(text);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe('redactIdentifier', () => {
  it('keeps the digits of an id, which redact replaces', () => {
    for (const id of ['12345678-9abc-4def-8123-456789012345', '1234567890', '4111 1111 1111 1111']) {
      expect(redactIdentifier(id)).toBe(id);
      expect(redact(id)).toContain('[REDACTED:number]');
    }
  });

  it('replaces a credential or an e-mail address sent as an id, as redact does', () => {
    const id = 'alice.secret@example.com Bearer abc123def456ghi789 sk-abcdefghijklmnopqrstuvwx';
    expect(redactIdentifier(id)).toBe(redact(id));
    expect(redactIdentifier(id)).not.toMatch(/alice|abc123|sk-abc/);
  });
});

describe('redactPayload', () => {
  it('given JSON, when redacted, then it stays valid JSON with secrets and long numbers replaced', () => {
    const json = JSON.stringify({
      customer: 'jane@example.com',
      phone: 4155550100123,
      count: 3,
      nested: ['ok'],
    });
    const out = redactPayload(json);
    expect(JSON.parse(out)).toEqual({
      customer: '[REDACTED:email]',
      phone: '[REDACTED:number]',
      count: 3,
      nested: ['ok'],
    });
  });

  it('given a secret-named key, then its value is replaced whatever it looks like', () => {
    const out = redactPayload(
      '{"api_key":"abc","db_password":"x","max_tokens":100,"token_count":3,"nested":{"csrf_token":"q"}}',
    );
    expect(JSON.parse(out)).toEqual({
      api_key: '[REDACTED:secret]',
      db_password: '[REDACTED:password]',
      max_tokens: 100,
      token_count: 3,
      nested: { csrf_token: '[REDACTED:secret]' },
    });
  });

  it("given an HTTP client's error dump, then the credentials in its header map are replaced", () => {
    const out = redactPayload(
      '{"request":{"method":"GET","headers":{"Authorization":"Basic R0FQdXNlcjpHQVBwYXNz","Cookie":"sid=GAPcookie",' +
        '"Accept":"application/json"}},"proxy-authorization":"GAPproxyToken","credentials":{"user":"GAPuser"},' +
        '"pass":"GAPpass"}',
    );
    expect(JSON.parse(out)).toEqual({
      request: {
        method: 'GET',
        headers: {
          Authorization: '[REDACTED:secret]',
          Cookie: '[REDACTED:secret]',
          Accept: 'application/json',
        },
      },
      'proxy-authorization': '[REDACTED:secret]',
      credentials: '[REDACTED:secret]',
      pass: '[REDACTED:password]',
    });
  });

  it('given a secret-named key holding a list or an object, then the whole value is replaced', () => {
    const out = redactPayload(
      '{"error":"login failed","password":["Sup3rS3cret!"],"token":{"access":"tok_live_9f8e7d6c"},' +
        '"aws_secret_access_key":"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY","api_key":null,"secret":false}',
    );
    expect(JSON.parse(out)).toEqual({
      error: 'login failed',
      password: '[REDACTED:password]',
      token: '[REDACTED:secret]',
      aws_secret_access_key: '[REDACTED:secret]',
      api_key: null,
      secret: false,
    });
  });

  it('given JSON nested thousands deep, when redacted, then the deep part is replaced instead of overflowing the stack', () => {
    const deep = `{"error":{"code":"E_DEEP","detail":${'['.repeat(20_000)}${']'.repeat(20_000)}}}`;
    expect(() => JSON.parse(deep)).not.toThrow();
    const out = JSON.parse(redactPayload(deep)) as { error: { code: string; detail: unknown } };
    expect(out.error.code).toBe('E_DEEP');
    expect(JSON.stringify(out.error.detail)).toContain('[REDACTED:nested]');
    expect(storedText(deep, 2048)).toContain('E_DEEP');
  });

  it('given text that is not JSON, when redacted, then it is redacted as plain text', () => {
    expect(redactPayload('{"broken": "jane@example.com"')).toBe('{"broken": "[REDACTED:email]"');
  });

  it('given JSON inside a text, then a number under a secret-named key is replaced too (quoted, as in JSON)', () => {
    expect(redactPayload('Request was: {"password":482913,"otp_token": 551234,"max_tokens":100}')).toBe(
      'Request was: {"password":"[REDACTED:password]","otp_token": "[REDACTED:secret]","max_tokens":100}',
    );
    // A count under a token key is no secret: it would read as a leak (leaky-error).
    expect(redactPayload('Usage: {"cached_token": 0, "total_token": 1234}')).toBe(
      'Usage: {"cached_token": 0, "total_token": 1234}',
    );
  });
});

describe('truncateUtf8', () => {
  it('given a text within the limit, then it is returned as is', () => {
    expect(truncateUtf8('héllo', 6)).toBe('héllo');
  });

  it('given a long ASCII text, then it is cut, marked, and fits the limit', () => {
    const text = 'a'.repeat(5000);
    const out = truncateUtf8(text, 2048);
    expect(utf8ByteLength(out)).toBeLessThanOrEqual(2048);
    expect(out).toMatch(/^a+…\[truncated \d+ bytes\]$/);
    const kept = out.indexOf('…');
    expect(out).toBe(`${'a'.repeat(kept)}…[truncated ${5000 - kept} bytes]`);
  });

  it('never splits a code point', () => {
    const text = '😀'.repeat(100) + 'é'.repeat(100);
    for (let limit = 30; limit < 300; limit++) {
      const out = truncateUtf8(text, limit);
      expect(utf8ByteLength(out)).toBeLessThanOrEqual(limit);
      expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
      const dropped = Number(/truncated (\d+) bytes/.exec(out)?.[1]);
      expect(utf8ByteLength(out.slice(0, out.indexOf('…[truncated'))) + dropped).toBe(utf8ByteLength(text));
    }
  });

  it('given a limit too small for the marker, then the bare prefix is returned', () => {
    expect(truncateUtf8('abcdefghijklmnopqrstuvwxyz'.repeat(4), 10)).toBe('abcdefghij');
  });
});

describe('storedText', () => {
  it('redacts before truncating, so a secret is never cut into an unrecognizable stub', () => {
    const text = `${'x'.repeat(40)} jane@example.com`;
    expect(storedText(text, 80)).toBe(`${'x'.repeat(40)} [REDACTED:email]`);
    expect(storedText('', 80)).toBeNull();
    expect(storedText(null, 80)).toBeNull();
  });
});
