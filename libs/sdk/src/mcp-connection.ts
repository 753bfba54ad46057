/**
 * What a connected `@modelcontextprotocol/sdk` 1.x `Client` says about its server and transport: `serverInfo`
 * from the handshake, the session id, the negotiated protocol version and the transport kind. Only public
 * getters are used, except the Streamable HTTP / SSE transports' URL, which they keep in `_url` (read
 * defensively: a missing or odd value is simply left out).
 */
import type { Attributes } from '@opentelemetry/api';
import { isRecord } from '@errata/domain';
import {
  ATTR_ERRATA_SERVER_NAME,
  ATTR_ERRATA_SERVER_VERSION,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_MCP_SESSION_ID,
  ATTR_NETWORK_PROTOCOL_NAME,
  ATTR_NETWORK_TRANSPORT,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from './semconv';

/** Protocol versions negotiated by `initialize`, per client (v1 clients expose no getter for it). */
const negotiatedVersions = new WeakMap<object, string>();

export function rememberProtocolVersion(client: object, initializeResult: unknown): void {
  if (isRecord(initializeResult) && typeof initializeResult['protocolVersion'] === 'string') {
    negotiatedVersions.set(client, initializeResult['protocolVersion']);
  }
}

const HTTP_TRANSPORTS = new Set(['StreamableHTTPClientTransport', 'SSEClientTransport']);

function transportAttributes(transport: Record<string, unknown>, attributes: Attributes): void {
  const kind = transport.constructor?.name;
  if (kind === 'StdioClientTransport') {
    attributes[ATTR_NETWORK_TRANSPORT] = 'pipe';
  } else if (kind !== undefined && HTTP_TRANSPORTS.has(kind)) {
    attributes[ATTR_NETWORK_TRANSPORT] = 'tcp';
    attributes[ATTR_NETWORK_PROTOCOL_NAME] = 'http';
    const url = transport['_url'];
    if (url instanceof URL) {
      attributes[ATTR_SERVER_ADDRESS] = url.hostname.replace(/^\[(.*)\]$/, '$1');
      const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
      attributes[ATTR_SERVER_PORT] = port;
    }
  }
}

interface CachedConnection {
  readonly transport: unknown;
  readonly serverInfo: unknown;
  readonly sessionId: unknown;
  readonly protocolVersion: unknown;
  readonly attributes: Attributes;
}

/** Read once per connection state: they change only on (re)connect, and this runs on every call. */
const connections = new WeakMap<object, CachedConnection>();

export function connectionAttributes(client: object): Attributes {
  const c = client as { getServerVersion?: () => unknown; transport?: unknown };
  const serverInfo = typeof c.getServerVersion === 'function' ? c.getServerVersion() : undefined;
  const transport = c.transport;
  const sessionId = isRecord(transport) ? transport['sessionId'] : undefined;
  const protocolVersion =
    negotiatedVersions.get(client) ?? (isRecord(transport) ? transport['protocolVersion'] : undefined);
  const cached = connections.get(client);
  if (
    cached !== undefined &&
    cached.transport === transport &&
    cached.serverInfo === serverInfo &&
    cached.sessionId === sessionId &&
    cached.protocolVersion === protocolVersion
  ) {
    return cached.attributes;
  }
  const attributes: Attributes = {};
  if (isRecord(serverInfo)) {
    if (typeof serverInfo['name'] === 'string') attributes[ATTR_ERRATA_SERVER_NAME] = serverInfo['name'];
    if (typeof serverInfo['version'] === 'string')
      attributes[ATTR_ERRATA_SERVER_VERSION] = serverInfo['version'];
  }
  if (isRecord(transport)) transportAttributes(transport, attributes);
  if (typeof sessionId === 'string' && sessionId !== '') attributes[ATTR_MCP_SESSION_ID] = sessionId;
  if (typeof protocolVersion === 'string') attributes[ATTR_MCP_PROTOCOL_VERSION] = protocolVersion;
  connections.set(client, { transport, serverInfo, sessionId, protocolVersion, attributes });
  return attributes;
}
