import { describe, expect, it } from 'vitest';

import {
  redact,
  redactIdentifier,
  redactPayload,
  storedText,
  truncateUtf8,
  utf8ByteLength,
} from './redaction';

describe('redact', () => {
  it.each([
    ['bearer token', 'Authorization: Bearer abc123DEF456ghi789', 'Authorization: Bearer [REDACTED:bearer]'],
    ['OpenAI key', 'key sk-proj-AbCdEf0123456789xyzXYZ rejected', 'key [REDACTED:api_key] rejected'],
    ['Anthropic key', 'sk-ant-api03-abcdefghijklmnop_QRST-uv', '[REDACTED:api_key]'],
    ['AWS access key id', 'creds AKIAIOSFODNN7EXAMPLE used', 'creds [REDACTED:api_key] used'],
    ['GitHub token', 'token ghp_1234567890abcdefghijABCDEFGHIJ012345', 'token [REDACTED:api_key]'],
    ['Slack token', 'xoxb-1234567890-abcdefghijkl', '[REDACTED:api_key]'],
    ['Stripe key', 'sk_live_4eC39HqLyjWDarjtT1zdp7dc', '[REDACTED:api_key]'],
    [
      'key Errata made',
      'rejected key errata_ingest_q3-Xv_9aBcDeFgHiJkLmNoPqRsTuVwXyZ01 for project default',
      'rejected key [REDACTED:api_key] for project default',
    ],
    [
      'JWT',
      'session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U expired',
      'session [REDACTED:jwt] expired',
    ],
    [
      'password in URL',
      'connect postgres://app:s3cr3t!@db.internal:5432/orders',
      'connect postgres://app:[REDACTED:password]@db.internal:5432/orders',
    ],
    [
      'password= pair',
      'login failed for password=hunter2&user=bob',
      'login failed for password=[REDACTED:password]&user=bob',
    ],
    ['passwd pair', 'passwd = letmein42', 'passwd = [REDACTED:password]'],
    [
      'cookie header (its session values)',
      'request failed\nCookie: session=GAPsess; theme=dark\nSet-Cookie: sid=GAPsid; Path=/',
      'request failed\nCookie: [REDACTED:secret]\nSet-Cookie: [REDACTED:secret]',
    ],
    [
      'bearer token written URL-encoded, as OTEL_EXPORTER_OTLP_HEADERS has it',
      'headers Authorization=Bearer%20GAPbearerToken1234 refused',
      'headers Authorization=Bearer%20[REDACTED:bearer] refused',
    ],
    [
      'quoted password of several words',
      'login with password="correct horse battery" failed',
      'login with password="[REDACTED:password]" failed',
    ],
    [
      'quoted pwd of two words after a colon',
      "pwd: 'hello world' rejected",
      "pwd: '[REDACTED:password]' rejected",
    ],
    [
      'password after a quote never closed (a text cut off)',
      'login password="hunter2',
      'login password="[REDACTED:password]',
    ],
    [
      'JSON a producer cut inside a secret value',
      '{"user":"ada","api_key":"sk_abc123def456…',
      '{"user":"ada","api_key":"[REDACTED:secret]"',
    ],
    [
      'quoted password, the quote not closed on its line',
      "password: 'x y\n  at open (user's file)",
      "password: '[REDACTED:password]\n  at open (user's file)",
    ],
    ['pwd pair', 'pwd=abc', 'pwd=[REDACTED:password]'],
    [
      'token query parameter',
      'GET /export?access_token=abcdef123',
      'GET /export?access_token=[REDACTED:secret]',
    ],
    [
      'JSON password',
      '{"user":"bob","password":"hunter2"}',
      '{"user":"bob","password":"[REDACTED:password]"}',
    ],
    ['colon pair that looks secret', 'password: hunter2', 'password: [REDACTED:password]'],
    [
      'Basic authorization header',
      'Authorization: Basic dXNlcjpwYXNzd29yZA==',
      'Authorization: Basic [REDACTED:authorization]',
    ],
    [
      'bare authorization value',
      '{"authorization":"tok_9f8e7d6c5b4a"}',
      '{"authorization":"[REDACTED:authorization]"}',
    ],
    ['e-mail address', 'No account for jane.doe+test@example.co.uk.', 'No account for [REDACTED:email].'],
    ['long digit run', 'Card 4111111111111111 declined', 'Card [REDACTED:number] declined'],
    ['grouped card number', 'Card 4111 1111 1111 1111 declined', 'Card [REDACTED:number] declined'],
    ['digits inside an identifier', 'account acct12345678 locked', 'account acct[REDACTED:number] locked'],
    [
      'private key',
      'key -----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY----- end',
      'key [REDACTED:private_key] end',
    ],
    [
      'bearer token of letters only',
      'upstream 401: request had Authorization: Bearer QwErTyUiOpAsDfGhJkLzXcVbNmQwErTy',
      'upstream 401: request had Authorization: Bearer [REDACTED:bearer]',
    ],
    [
      'long lower-case bearer token',
      'curl -H "Bearer abcdefghijklmnopqrstuvwxyz"',
      'curl -H "Bearer [REDACTED:bearer]"',
    ],
    [
      'word-like token after an explicit Authorization: Bearer',
      'Authorization: Bearer abcdefgh',
      'Authorization: Bearer [REDACTED:authorization]',
    ],
    [
      'mixed-case bare authorization value',
      'Authorization: QwErTyUi',
      'Authorization: [REDACTED:authorization]',
    ],
    [
      'AWS secret access key in an env pair',
      'boto: AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY rejected',
      'boto: AWS_ACCESS_KEY_ID=[REDACTED:api_key] AWS_SECRET_ACCESS_KEY=[REDACTED:secret] rejected',
    ],
    [
      'AWS secret access key in a spaced pair',
      'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      'aws_secret_access_key = [REDACTED:secret]',
    ],
    [
      'AWS secret access key in a colon pair',
      'aws_secret_access_key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      'aws_secret_access_key: [REDACTED:secret]',
    ],
    [
      'private key, client secret and camel-case key names in JSON inside a text',
      'config {"privateKey":"abcdefghijkl","client_secret":"s3cr3t","signing-key":"x"} rejected',
      'config {"privateKey":"[REDACTED:secret]","client_secret":"[REDACTED:secret]","signing-key":"[REDACTED:secret]"} rejected',
    ],
    [
      'JSON-escaped e-mail address in a text',
      'failed: {"email":"alice\\u0040example.com"} oops',
      'failed: {"email":"[REDACTED:email]"} oops',
    ],
    [
      'URL-encoded e-mail address',
      'GET /users?email=alice%40example.com&x=1',
      'GET /users?email=[REDACTED:email]&x=1',
    ],
  ])('given a %s, when redacted, then it is replaced by a stable placeholder', (_kind, input, expected) => {
    expect(redact(input)).toBe(expected);
  });

  it.each([
    'Invalid departure date: must be in the future. Current date is 08/08/2025.',
    'Order ID must be in format #NNNNN, such as #12345.',
    'start_date must be before end_date (2026-07-01 to 2026-07-10).',
    'password: must be at least 8 characters',
    'authorization: required for this operation',
    'Authorization: insufficient',
    'The bearer of this card must sign',
    'max_tokens=4096 exceeds the limit',
    'Task sk-learn is not installed',
    'Use @modelcontextprotocol/sdk version 1.2.3',
    'Access denied - path outside allowed directories',
    'Bearer of bad news',
    'The Bearer instrument must sign',
    'token bucket is empty',
    'token: expired',
    'keyboard layout not supported',
    'primary_key column is missing',
    'primary_key: id',
    'hotkey=ctrl and monkey=3',
    'key=value pairs only',
    '100%40 done',
    '',
    'short',
    'login failed: password="" was empty',
    'Invalid cookie: expired',
    "api_key='' is not set",
  ])('given normal text %j, when redacted, then it is untouched', (text) => {
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
