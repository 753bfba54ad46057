/**
 * What a connected MCP `Client` (`@modelcontextprotocol/sdk` 1.x or `@modelcontextprotocol/client` 2.x) says about
 * its server and transport: `serverInfo` from the handshake, the session id, the negotiated protocol version and the
 * transport kind. Only public getters are used, except the fields that tell the transport apart: the Streamable
 * HTTP / SSE / WebSocket transports' URL in `_url` and the stdio transport's server parameters in `_serverParams`
 * (read defensively: a missing or odd value is simply left out).
 */
import type { Attributes } from '@opentelemetry/api';
import { isRecord } from '@errata/domain';
import type { McpClientShape } from './mcp-client-shape';
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

/**
 * What state of a connection is kept under: the client's transport while it has one. A host may hand the client
 * out behind a Proxy (LangChain's MultiServerMCPClient does): `connect()` and the server's requests then run on the
 * client itself and the tool calls on the Proxy, two objects with one transport.
 */
export function connectionKey(client: object): object {
  const transport = (client as { transport?: unknown }).transport;
  return isRecord(transport) ? transport : client;
}

/** Protocol versions negotiated by `initialize`, per connection (v1 clients expose no getter for it). */
const negotiatedVersions = new WeakMap<object, string>();

export function rememberProtocolVersion(client: object, initializeResult: unknown): void {
  if (isRecord(initializeResult) && typeof initializeResult['protocolVersion'] === 'string') {
    negotiatedVersions.set(connectionKey(client), initializeResult['protocolVersion']);
  }
}

const HTTP_TRANSPORTS = ['StreamableHTTPClientTransport', 'SSEClientTransport'];
/** URL scheme → `network.protocol.name` and the port the URL leaves out. */
const URL_SCHEMES: Readonly<Record<string, { readonly protocol: string; readonly defaultPort: number }>> = {
  'http:': { protocol: 'http', defaultPort: 80 },
  'https:': { protocol: 'http', defaultPort: 443 },
  'ws:': { protocol: 'websocket', defaultPort: 80 },
  'wss:': { protocol: 'websocket', defaultPort: 443 },
};

/** Whether the transport's class, or one it extends (a host subclass), has one of these names. */
function isOfClass(transport: object, names: readonly string[]): boolean {
  for (let proto = Object.getPrototypeOf(transport); proto !== null; proto = Object.getPrototypeOf(proto)) {
    const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
    if (typeof name === 'string' && names.includes(name)) return true;
  }
  return false;
}

/**
 * Told apart by the fields the SDK's transports keep, which survive a minifier — the URL of the HTTP (and
 * WebSocket) ones, the server command of stdio — then by class name.
 */
function transportAttributes(transport: Record<string, unknown>, attributes: Attributes): void {
  const url = transport['_url'];
  const serverParams = transport['_serverParams'];
  if (url instanceof URL) {
    attributes[ATTR_NETWORK_TRANSPORT] = 'tcp';
    const scheme = URL_SCHEMES[url.protocol];
    if (scheme !== undefined) attributes[ATTR_NETWORK_PROTOCOL_NAME] = scheme.protocol;
    attributes[ATTR_SERVER_ADDRESS] = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = url.port !== '' ? Number(url.port) : scheme?.defaultPort;
    if (port !== undefined) attributes[ATTR_SERVER_PORT] = port;
  } else if (
    (isRecord(serverParams) && typeof serverParams['command'] === 'string') ||
    isOfClass(transport, ['StdioClientTransport'])
  ) {
    attributes[ATTR_NETWORK_TRANSPORT] = 'pipe';
  } else if (isOfClass(transport, HTTP_TRANSPORTS)) {
    attributes[ATTR_NETWORK_TRANSPORT] = 'tcp';
    attributes[ATTR_NETWORK_PROTOCOL_NAME] = 'http';
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

export function connectionAttributes(client: object, shape: McpClientShape): Attributes {
  const c = client as { getServerVersion?: () => unknown; transport?: unknown };
  const serverInfo = typeof c.getServerVersion === 'function' ? c.getServerVersion() : undefined;
  const transport = c.transport;
  const sessionId = isRecord(transport) ? transport['sessionId'] : undefined;
  const protocolVersion = shape.protocolVersion(
    client,
    transport,
    negotiatedVersions.get(connectionKey(client)),
  );
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
