import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backoffMs, retryAfterMs } from '../services/delivery.service';
import {
  DeliveryRefusedError,
  describeWebhookUrl,
  isInternalAddress,
  postSafely,
  refusalOf,
} from './safe-http';

const GUARDED = { allowInternal: false, timeoutMs: 2_000, maxResponseBytes: 1024 };
const OPEN = { ...GUARDED, allowInternal: true };

let receiver: Server;
let port: number;
const hits: string[] = [];
beforeAll(async () => {
  receiver = createServer((request, response) => {
    hits.push(request.url ?? '');
    if (request.url === '/redirect') {
      response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    } else if (request.url === '/big') {
      response.end('x'.repeat(100_000));
    } else {
      response.end('ok');
    }
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

describe('postSafely, the webhook SSRF guard', () => {
  it.each([
    ['cloud metadata', 'https://169.254.169.254/latest/meta-data/'],
    ['a private network', 'https://10.0.0.1/hook'],
    ['IPv6 loopback', 'https://[::1]/hook'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hook'],
    ['carrier-grade NAT', 'https://100.64.1.2/hook'],
  ])('refuses %s', async (_name, url) => {
    await expect(postSafely(url, '{}', {}, GUARDED)).rejects.toBeInstanceOf(DeliveryRefusedError);
  });

  it('refuses a hostname that resolves to loopback, checked when the socket connects', async () => {
    await expect(postSafely(`https://localhost:${port}/hook`, '{}', {}, GUARDED)).rejects.toThrow(
      /localhost resolves to internal address/,
    );
  });

  it('refuses plain http unless internal addresses are allowed', async () => {
    await expect(postSafely(`http://example.com/hook`, '{}', {}, GUARDED)).rejects.toThrow(/only https/);
  });

  it('when allowed, reaches a local receiver; does not follow redirects; caps the response', async () => {
    expect((await postSafely(`http://127.0.0.1:${port}/hook`, '{}', {}, OPEN)).status).toBe(200);
    const redirected = await postSafely(`http://localhost:${port}/redirect`, '{}', {}, OPEN);
    expect(redirected.status).toBe(302);
    expect(hits).not.toContain('/latest/meta-data/');
    const big = await postSafely(`http://127.0.0.1:${port}/big`, '{}', {}, OPEN);
    expect(big.body.length).toBeLessThanOrEqual(64 * 1024);
  });

  it('classifies addresses', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '::1',
      'fd00::1',
      'fe80::1',
    ])
      expect(isInternalAddress(address), address).toBe(true);
    for (const address of ['93.184.216.34', '2606:2800:220:1::1', '8.8.8.8'])
      expect(isInternalAddress(address), address).toBe(false);
  });

  it('judges an IPv6 address that carries an IPv4 one by that IPv4 address, in every form that reaches it', () => {
    for (const address of [
      '::ffff:7f00:1', // mapped, as the URL parser writes [::ffff:127.0.0.1]
      '::ffff:169.254.169.254',
      '::ffff:0:a9fe:a9fe', // translated
      '::7f00:1', // compatible
      '::169.254.169.254',
      '64:ff9b::a9fe:a9fe', // NAT64
      '64:ff9b::10.0.0.1',
      '64:ff9b:1::808:808', // NAT64 for local use: the site's own networks
      '2002:a9fe:a9fe::1', // 6to4
      '2002:c0a8:101::',
      '2001:0:4136:e378:8000:63bf:80ff:fffe', // Teredo, client 127.0.0.1 inverted
      'fec0::1',
    ])
      expect(isInternalAddress(address), address).toBe(true);
    for (const address of [
      '::ffff:808:808',
      '64:ff9b::5db8:d822',
      '2002:5db8:d822::1',
      '2001:0:4136:e378:8000:63bf:a247:2ddd', // Teredo, client 93.184.210.34
      '2001:4860:4860::8888',
    ])
      expect(isInternalAddress(address), address).toBe(false);
  });
});

describe('refusalOf, the check a webhook URL gets when its owner registers', () => {
  it('refuses what every delivery would be refused for: no URL, not https, an internal address written out', () => {
    for (const url of [
      'hooks.example.com/errata',
      'http://hooks.example.com/errata',
      'ftp://hooks.example.com/errata',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[64:ff9b::169.254.169.254]/latest/meta-data/',
      'https://[2002:a9fe:a9fe::]/hook',
      'https://2130706433/hook',
    ])
      expect(refusalOf(url, false), url).not.toBeNull();
  });

  it('takes a public https URL, and with internal addresses allowed, http and loopback too', () => {
    expect(refusalOf('https://hooks.example.com/errata', false)).toBeNull();
    expect(refusalOf('https://93.184.216.34/hook', false)).toBeNull();
    expect(refusalOf('http://127.0.0.1:8080/hook', true)).toBeNull();
    expect(refusalOf('https://[::1]/hook', true)).toBeNull();
    expect(refusalOf('ftp://127.0.0.1/hook', true)).not.toBeNull();
  });
});

describe('retry timing', () => {
  it('backs off four times longer each attempt, capped at a day, with ±50 % jitter', () => {
    expect(backoffMs(1, 5_000, () => 0.5)).toBe(5_000);
    expect(backoffMs(2, 5_000, () => 0.5)).toBe(20_000);
    expect(backoffMs(3, 5_000, () => 0)).toBe(40_000);
    expect(backoffMs(30, 5_000, () => 0.5)).toBe(86_400_000);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('120')).toBe(120_000);
    expect(
      retryAfterMs(new Date(Date.UTC(2026, 10, 30, 10, 1)).toUTCString(), Date.UTC(2026, 10, 30, 10)),
    ).toBe(60_000);
    expect(retryAfterMs(undefined)).toBeNull();
    expect(retryAfterMs('soon')).toBeNull();
  });

  it('waits at most a day for a Retry-After, however far it asks (a year, or more seconds than a timestamp holds)', () => {
    expect(retryAfterMs(String(365 * 86_400))).toBe(86_400_000);
    expect(retryAfterMs('99999999999999999999')).toBe(86_400_000);
    expect(retryAfterMs('Fri, 01 Jan 2100 00:00:00 GMT', Date.UTC(2026, 10, 30))).toBe(86_400_000);
  });
});

describe('describeWebhookUrl', () => {
  it('shows scheme, host and port only: user info, a secret path and a token in the query stay out of the log', () => {
    expect(
      describeWebhookUrl(
        'https://hookuser:HookPassw0rd@hooks.example.com:8443/services/T0/B0/SlackSecret?token=tok',
      ),
    ).toBe('https://hooks.example.com:8443/…');
    expect(describeWebhookUrl('not a url')).toBe('(unparseable URL)');
  });
});
