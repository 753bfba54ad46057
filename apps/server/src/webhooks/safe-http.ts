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
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  INTERNAL.addSubnet(network, prefix, 'ipv6');
}

/** True for addresses a webhook must not reach by default (IPv4-mapped IPv6 judged by its IPv4 address). */
export function isInternalAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined) return INTERNAL.check(mapped, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true; // not an address at all: refuse
  return INTERNAL.check(address, family === 4 ? 'ipv4' : 'ipv6');
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
