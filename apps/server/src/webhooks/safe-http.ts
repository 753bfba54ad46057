import * as dns from 'node:dns';
import * as http from 'node:http';
import * as https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Webhook requests that cannot be turned against Errata's own network (SSRF): loopback, private, link-local,
 * carrier-grade NAT, multicast and cloud-metadata addresses are refused unless explicitly allowed. The address
 * is checked at connect time — in the lookup the socket connects with — so a name that resolves to a public
 * address when checked and a private one when used (DNS rebinding) cannot slip through. Redirects are not
 * followed, the response body is capped, and the whole exchange has a deadline.
 */
export class DeliveryRefusedError extends Error {}

const INTERNAL = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  INTERNAL.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48], // NAT64 for local use (RFC 8215): translates into the site's own IPv4 networks
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10], // site-local (deprecated, still routed by some stacks)
  ['ff00::', 8],
] as const) {
  INTERNAL.addSubnet(network, prefix, 'ipv6');
}

/** The 16 bytes of an IPv6 address (`isIP(address) === 6`), a dotted IPv4 tail included. */
function ipv6Bytes(address: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const tail = dotted === null ? [] : dotted.slice(1).map(Number);
  const hex = dotted === null ? address : address.slice(0, dotted.index) + '0:0';
  const [head = '', rest] = hex.split('::');
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = groupsOf(head);
  const back = rest === undefined ? [] : groupsOf(rest);
  const groups = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  const bytes = groups.flatMap((group) => [group >> 8, group & 0xff]);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

const startsWith = (bytes: number[], prefix: number[]) => prefix.every((byte, i) => bytes[i] === byte);
const ipv4Of = (bytes: number[]) => bytes.join('.');

/**
 * The IPv4 address an IPv6 address carries and is delivered to, where one is: IPv4-mapped (`::ffff:0:0/96`, in
 * any spelling), IPv4-translated (`::ffff:0:0:0/96`), IPv4-compatible (`::/96`), NAT64 (`64:ff9b::/96`), 6to4
 * (`2002::/16`) and Teredo (`2001::/32`, the client's address inverted). Each can reach an IPv4 host, such as a
 * cloud metadata address, through a stack or a gateway that translates it.
 */
function embeddedIpv4(address: string): string | null {
  const bytes = ipv6Bytes(address);
  const zeros = (count: number) => new Array<number>(count).fill(0);
  if (startsWith(bytes, [...zeros(10), 0xff, 0xff])) return ipv4Of(bytes.slice(12));
  if (startsWith(bytes, [...zeros(8), 0xff, 0xff, 0, 0])) return ipv4Of(bytes.slice(12));
  if (startsWith(bytes, zeros(12))) return ipv4Of(bytes.slice(12));
  if (startsWith(bytes, [0x00, 0x64, 0xff, 0x9b, ...zeros(8)])) return ipv4Of(bytes.slice(12));
  if (startsWith(bytes, [0x20, 0x02])) return ipv4Of(bytes.slice(2, 6));
  if (startsWith(bytes, [0x20, 0x01, 0x00, 0x00])) return ipv4Of(bytes.slice(12).map((byte) => byte ^ 0xff));
  return null;
}

/** True for addresses a webhook must not reach by default (an IPv6 address carrying an IPv4 one judged by both). */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true; // not an address at all: refuse
  if (family === 4) return INTERNAL.check(address, 'ipv4');
  if (INTERNAL.check(address, 'ipv6')) return true;
  const carried = embeddedIpv4(address.replace(/%.*$/, ''));
  return carried !== null && INTERNAL.check(carried, 'ipv4');
}

export interface SafePostOptions {
  readonly allowInternal: boolean;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
}

export interface SafeResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/**
 * Why a webhook URL is refused before any connection, or null: not a URL, not https (http only where internal
 * addresses are allowed), or an internal address written out. A name that resolves to an internal address is
 * refused when the request connects: what it resolves to can change.
 */
export function refusalOf(url: string, allowInternal: boolean): string | null {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return `not a URL: ${url}`;
  }
  if (target.protocol !== 'https:' && !(allowInternal && target.protocol === 'http:')) {
    return `only https:// endpoints are allowed, got ${target.protocol}//`;
  }
  if (allowInternal) return null;
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) !== 0 && isInternalAddress(host) ? `refused internal address ${host}` : null;
}

/** Throws DeliveryRefusedError for a URL it will not call; resolves with any HTTP answer, even an error status. */
export async function postSafely(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: SafePostOptions,
): Promise<SafeResponse> {
  const refusal = refusalOf(url, options.allowInternal);
  if (refusal !== null) throw new DeliveryRefusedError(refusal);
  const target = new URL(url);
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    dns.lookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as dns.LookupAddress[];
      const refused = options.allowInternal ? undefined : list.find((a) => isInternalAddress(a.address));
      if (refused !== undefined) {
        return callback(
          new DeliveryRefusedError(`refused: ${hostname} resolves to internal address ${refused.address}`),
          '',
          0,
        );
      }
      if (lookupOptions.all) return callback(null, list);
      const first = list[0];
      if (first === undefined) return callback(new Error(`${hostname} has no address`), '', 0);
      return callback(null, first.address, first.family);
    });
  };
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<SafeResponse>((resolve, reject) => {
    const request = client.request(
      target,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
        lookup,
        timeout: options.timeoutMs,
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= options.maxResponseBytes) chunks.push(chunk);
          else response.destroy(); // enough: the status is what counts
        });
        const done = () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          });
        response.on('end', done);
        response.on('close', done);
        response.on('error', done);
      },
    );
    const deadline = setTimeout(
      () => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    request.on('close', () => clearTimeout(deadline));
    request.on('timeout', () => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * A webhook URL as the log may show it: scheme, host and port. Its user info, path and query can be the secret
 * (a Slack-style hook path, `?token=…`), and an operator finds the owner by its id anyway.
 */
export function describeWebhookUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}/…`;
  } catch {
    return '(unparseable URL)';
  }
}
