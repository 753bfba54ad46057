import { isIPv6 } from 'node:net';

/** The URL the server says it listens on: an IPv6 host goes in brackets (`http://[::1]:4318`), as in any URL. */
export const listeningUrl = (host: string, port: number): string =>
  `http://${isIPv6(host) ? `[${host}]` : host}:${port}`;
