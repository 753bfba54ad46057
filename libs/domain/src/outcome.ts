/**
 * Outcome derivation (DOMAIN.md §1): how a tool call ended, from the signals a span carries.
 */
import type { Outcome } from './events';

/** What a span says about how its call ended; everything optional is null when absent. */
export interface OutcomeSignals {
  /** `error.type` as sent. */
  readonly errorType: string | null;
  /** JSON-RPC error code (`rpc.response.status_code`, `rpc.status_code`, `rpc.jsonrpc.error_code`). */
  readonly rpcStatusCode: string | null;
  /** The result's `isError`; null when no tool result was seen. */
  readonly isError: boolean | null;
  readonly empty: boolean | null;
  readonly itemCount: number | null;
  /** Span status is ERROR. */
  readonly statusError: boolean;
  /** Span status description. */
  readonly statusMessage: string | null;
}

/** MCP SDK client-side codes. */
export const JSONRPC_REQUEST_TIMEOUT = -32001;
export const JSONRPC_CONNECTION_CLOSED = -32000;

/**
 * `error.type` values (lowercased, non-alphanumerics dropped) that mean the client gave up waiting: on its own
 * timer, or cancelled by the agent (`AbortError`; DOMAIN.md has no outcome of its own for a cancelled call, and
 * no JSON-RPC error came back, so it is not a protocol error).
 */
const TIMEOUT_ERROR_TYPES: ReadonlySet<string> = new Set([
  'timeout',
  'requesttimeout',
  'timeouterror',
  'aborterror',
]);

/**
 * Network / connection failures, as exception names (`error.type`) or inside a message. The MCP SDK's HTTP
 * transports fail with `StreamableHTTPError` ("Streamable HTTP error: …"), `SseError` ("SSE error: …"), a plain
 * "Error POSTing to endpoint (HTTP 404): …" and `UnauthorizedError` (the v2 client, `@modelcontextprotocol/client`,
 * with `SdkHttpError`) when an HTTP request of theirs gets an error status: the server sent no JSON-RPC response. "Not connected" is the MCP SDK's whole message for a call on a client
 * whose transport is closed: nothing was sent.
 */
export const TRANSPORT_FAILURE =
  /\bE(?:CONNREFUSED|CONNRESET|CONNABORTED|PIPE|NOTFOUND|AI_AGAIN|HOSTUNREACH|NETUNREACH|NETDOWN|TIMEDOUT)\b|\bUND_ERR_[A-Z_]+\b|\bCONNECTION_CLOSED\b|\bConnectionClosed\b|\bfetch failed\b|\bsocket hang up\b|\bconnection (?:closed|refused|reset)\b|\bother side closed\b|\bnetwork error\b|\b(?:StreamableHTTP|Sse|SdkHttp|Unauthorized)Error\b|\b(?:Streamable HTTP|SSE) error:|\bError POSTing to endpoint\b|^Not connected$/i;

/** A client-side timeout in a message ("MCP error -32001: Request timed out"). */
const TIMEOUT_MESSAGE = /\btimed out\b|\btime-?out\b/i;

/**
 * The whole status message of a request the client cancelled (`notifications/cancelled`): Sentry ends its MCP server
 * span with status ERROR and message `cancelled`. The client gave up waiting, as with an `AbortError`: a timeout. Only
 * the whole message counts: "Order cannot be cancelled after shipment" is a tool's answer, not a cancellation.
 */
const CANCELLED_MESSAGE = /^\s*cancell?ed\s*$/i;

/** `McpError` messages of the TypeScript SDK: "MCP error -32602: …". */
const MCP_ERROR_MESSAGE = /\bMCP error (-?\d{1,6})\b/;

const INTEGER = /^\s*-?\d{1,10}\s*$/;

/** An integer-looking string as a number, else null. */
export function integerCode(text: string | null): number | null {
  return text !== null && INTEGER.test(text) ? Number.parseInt(text, 10) : null;
}

/** The JSON-RPC code an SDK `McpError` message carries ("MCP error -32001: Request timed out"), as a string. */
export function rpcCodeFromMessage(message: string | null): string | null {
  if (message === null) return null;
  const match = MCP_ERROR_MESSAGE.exec(message);
  return match?.[1] ?? null;
}

/** The JSON-RPC code of a call: the rpc status attribute, else a numeric `error.type`, else an `McpError` message
 * when no tool result was seen. */
export function jsonRpcCode(signals: OutcomeSignals): number | null {
  return (
    integerCode(signals.rpcStatusCode) ??
    integerCode(signals.errorType) ??
    (signals.isError === null ? integerCode(rpcCodeFromMessage(signals.statusMessage)) : null)
  );
}

function outcomeOfCode(code: number): Outcome {
  if (code === JSONRPC_REQUEST_TIMEOUT) return 'timeout';
  if (code === JSONRPC_CONNECTION_CLOSED) return 'transport_error';
  return 'protocol_error';
}

/**
 * Derives the outcome. Precedence, first match wins:
 *  1. a JSON-RPC code (rpc status attribute, numeric `error.type`, or an `McpError` message when no result was
 *     seen): -32001 → timeout, -32000 → transport_error, any other → protocol_error;
 *  2. `error.type` = timeout (also `TimeoutError`, `REQUEST_TIMEOUT`, and `AbortError`: cancelled) → timeout;
 *  3. `error.type` is a network exception (ECONNREFUSED, ECONNRESET, EPIPE, UND_ERR_*, …) → transport_error;
 *  4. `isError` true or `error.type` = tool_error → tool_error;
 *  5. a result was seen (`isError` false) → ok / ok_empty;
 *  6. no result but the call failed (`error.type` set or status ERROR): the status message decides —
 *     network failure → transport_error, "timed out" or a bare "cancelled" → timeout, else protocol_error;
 *  7. otherwise ok / ok_empty.
 * ok_empty when `empty` is true, or `empty` is absent and `itemCount` is 0 (an explicit `empty: false` wins).
 */
export function deriveOutcome(signals: OutcomeSignals): Outcome {
  const code = jsonRpcCode(signals);
  if (code !== null) return outcomeOfCode(code);

  const errorType = signals.errorType?.trim() ?? '';
  if (errorType !== '') {
    if (TIMEOUT_ERROR_TYPES.has(errorType.toLowerCase().replace(/[^a-z0-9]/g, ''))) return 'timeout';
    if (TRANSPORT_FAILURE.test(errorType)) return 'transport_error';
  }
  if (signals.isError === true || errorType === 'tool_error') return 'tool_error';

  if (signals.isError === null && (errorType !== '' || signals.statusError)) {
    const message = signals.statusMessage ?? '';
    if (TRANSPORT_FAILURE.test(message)) return 'transport_error';
    if (TIMEOUT_MESSAGE.test(message) || CANCELLED_MESSAGE.test(message)) return 'timeout';
    return 'protocol_error';
  }

  const empty = signals.empty ?? (signals.itemCount === null ? false : signals.itemCount === 0);
  return empty ? 'ok_empty' : 'ok';
}

/** True when a status message explains a failure that produced no tool result (a code, a timeout, a network error). */
export function messageExplainsNoResult(message: string | null): boolean {
  if (message === null) return false;
  return (
    rpcCodeFromMessage(message) !== null || TRANSPORT_FAILURE.test(message) || TIMEOUT_MESSAGE.test(message)
  );
}
