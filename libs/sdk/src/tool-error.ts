/**
 * A `tools/call` that threw instead of returning a result (research/otel_mcp_spec.md §1.3, §6): a JSON-RPC error
 * response, the SDK's own timeout (-32001; 2.x: `REQUEST_TIMEOUT`) or closed connection (-32000; 2.x:
 * `CONNECTION_CLOSED`), an McpError the SDK raised over a result it got, a cancellation by the host, an HTTP error
 * status answered to an HTTP transport, or a network exception.
 * The message leaves the process as every text does: redacted, cut to the text limit.
 */
import type { Attributes } from '@opentelemetry/api';
import {
  isRecord,
  JSONRPC_CONNECTION_CLOSED,
  JSONRPC_REQUEST_TIMEOUT,
  MAX_NAME_BYTES,
  storedText,
} from '@errata/domain';
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_RPC_RESPONSE_STATUS_CODE } from './semconv';

export interface ToolErrorAttributes {
  readonly attributes: Attributes;
  /**
   * The span status description: the JSON-RPC message without the SDK's "MCP error <code>: " prefixes (a server on
   * the SDK adds one, the client another), redacted and truncated.
   */
  readonly message: string;
}

const MCP_ERROR_PREFIX = /^(?:MCP error -?\d+:\s*)+/;

/**
 * `@modelcontextprotocol/client` 2.x stamps its errors with the brands of their classes, which survive a minifier and
 * a second copy of the SDK: a `ProtocolError` is a JSON-RPC error (its message has no "MCP error" prefix), an
 * `SdkError` the SDK's own, with a string code.
 */
const V2_ERROR_BRANDS = Symbol.for('mcp.sdk.errorBrands');
const V2_PROTOCOL_ERROR = 'mcp.ProtocolError';
/** 2.x's HTTP transports throw it for an HTTP error status, kept in `data.status`. */
const V2_HTTP_ERROR = 'mcp.SdkHttpError';
const V2_HTTP_ERROR_TYPE = 'SdkHttpError';
/** 2.x `SdkError` codes → the `error.type` 1.x's JSON-RPC codes for the same failures give. */
const V2_SDK_ERROR_TYPES: ReadonlyMap<unknown, string> = new Map([
  ['REQUEST_TIMEOUT', 'timeout'],
  ['CONNECTION_CLOSED', String(JSONRPC_CONNECTION_CLOSED)],
]);

function v2Brands(error: Record<string, unknown>): { has(brand: string): boolean } | null {
  const brands = (error as { [V2_ERROR_BRANDS]?: unknown })[V2_ERROR_BRANDS];
  return brands instanceof Set ? brands : null;
}

/** `error.type` of an McpError the client SDK raised itself (its class name). */
const MCP_ERROR_TYPE = 'McpError';

/**
 * The MCP SDK's HTTP transports throw these when a request gets an HTTP error status, with the status as `code`
 * (-1 when there is none, as for an unexpected content type). Neither class sets `name`, so they are told apart by
 * their message, which survives a minifier.
 */
const HTTP_TRANSPORT_ERRORS = [
  { prefix: 'Streamable HTTP error: ', type: 'StreamableHTTPError' },
  { prefix: 'SSE error: ', type: 'SseError' },
] as const;

/**
 * The class of an error whose `name` is the generic "Error" (the MCP SDK's UnauthorizedError sets none), when it
 * reads as an error class name: a minified one ("e") says less than "Error".
 */
function errorClassName(error: Record<string, unknown>): string | null {
  const name = (error['constructor'] as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' && name !== 'Error' && /^[A-Za-z]\w*Error$/.test(name) ? name : null;
}

/**
 * A low-cardinality name for a non-MCP exception: its code (ECONNREFUSED, UND_ERR_…), its cause's, or its name
 * (its class's when the name is only "Error").
 */
function exceptionType(error: Record<string, unknown>): string {
  const cause = isRecord(error['cause']) ? error['cause'] : null;
  for (const value of [error['code'], cause?.['code']]) {
    if (typeof value === 'string' && value !== '') return value;
  }
  const name = typeof error['name'] === 'string' && error['name'] !== '' ? error['name'] : null;
  return (name === 'Error' ? errorClassName(error) : null) ?? name ?? '_OTHER';
}

/**
 * A code or name the host's code chose, as Errata stores a name: redacted and cut to MAX_NAME_BYTES. It leaves the
 * process as `error.type`, and nothing bounds what a library puts there.
 */
const hostName = (value: string): string => storedText(value, MAX_NAME_BYTES) ?? '_OTHER';

function messageOf(error: unknown): string {
  if (isRecord(error) && typeof error['message'] === 'string') return error['message'];
  return String(error);
}

export interface ToolErrorOptions {
  /** UTF-8 byte limit of the message. */
  readonly textLimitBytes: number;
  /** The host's `AbortSignal` had fired when the call failed: a cancellation, whatever error the SDK made of it. */
  readonly aborted: boolean;
  /** That signal's reason. */
  readonly abortReason?: unknown;
  /**
   * The MCP SDK threw without a JSON-RPC error response, whatever code its McpError carries: after the result came
   * back (structuredContent that breaks the tool's output schema), or before sending anything.
   */
  readonly raisedByClient?: boolean;
}

/** A cancelled call is named by its signal's reason (`AbortError`, `TimeoutError` for `AbortSignal.timeout`). */
function cancellationType(reason: unknown): string {
  const name = isRecord(reason) ? reason['name'] : undefined;
  return typeof name === 'string' && name !== '' && name !== 'Error' ? hostName(name) : 'AbortError';
}

/** An HTTP transport's error: named by its class; not the status as error.type, which would read as a JSON-RPC code. */
function httpErrorAttributes(type: string, status: unknown): Attributes {
  const attributes: Attributes = { [ATTR_ERROR_TYPE]: type };
  if (Number.isInteger(status) && (status as number) >= 100 && (status as number) <= 599)
    attributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = status as number;
  return attributes;
}

export function toolErrorAttributes(error: unknown, options: ToolErrorOptions): ToolErrorAttributes {
  const message = messageOf(error);
  const stored = (text: string): string => storedText(text, options.textLimitBytes) ?? '';
  const code = isRecord(error) && Number.isInteger(error['code']) ? (error['code'] as number) : null;
  const brands = isRecord(error) ? v2Brands(error) : null;
  const isMcpError =
    code !== null && (MCP_ERROR_PREFIX.test(message) || brands?.has(V2_PROTOCOL_ERROR) === true);
  if (options.aborted) {
    // SDK 1.2x wraps the reason in an McpError -32001, the code of its own timeout: without the prefix, the
    // message does not read as one either (libs/domain outcome.ts).
    return {
      attributes: { [ATTR_ERROR_TYPE]: cancellationType(options.abortReason) },
      message: stored(message.replace(MCP_ERROR_PREFIX, '')),
    };
  }
  if (isMcpError && options.raisedByClient === true) {
    // Named by the exception: a numeric error.type, like rpc.response.status_code, would say the server sent it.
    return {
      attributes: { [ATTR_ERROR_TYPE]: MCP_ERROR_TYPE },
      message: stored(message.replace(MCP_ERROR_PREFIX, '')),
    };
  }
  if (isMcpError && code === JSONRPC_REQUEST_TIMEOUT) {
    return { attributes: { [ATTR_ERROR_TYPE]: 'timeout' }, message: stored(message) };
  }
  if (isMcpError && code === JSONRPC_CONNECTION_CLOSED) {
    // An SDK-local code, not a server response: no rpc.response.status_code.
    return { attributes: { [ATTR_ERROR_TYPE]: String(code) }, message: stored(message) };
  }
  if (isMcpError) {
    return {
      attributes: { [ATTR_ERROR_TYPE]: String(code), [ATTR_RPC_RESPONSE_STATUS_CODE]: String(code) },
      message: stored(message.replace(MCP_ERROR_PREFIX, '')),
    };
  }
  if (brands?.has(V2_HTTP_ERROR) === true) {
    const data = isRecord(error) ? error['data'] : undefined;
    const status = isRecord(data) ? data['status'] : undefined;
    return { attributes: httpErrorAttributes(V2_HTTP_ERROR_TYPE, status), message: stored(message) };
  }
  const sdkErrorType = brands !== null && isRecord(error) ? V2_SDK_ERROR_TYPES.get(error['code']) : undefined;
  if (sdkErrorType !== undefined)
    return { attributes: { [ATTR_ERROR_TYPE]: sdkErrorType }, message: stored(message) };
  const httpError =
    code === null ? undefined : HTTP_TRANSPORT_ERRORS.find((e) => message.startsWith(e.prefix));
  if (httpError !== undefined && code !== null) {
    return { attributes: httpErrorAttributes(httpError.type, code), message: stored(message) };
  }
  const type = isRecord(error) ? hostName(exceptionType(error)) : '_OTHER';
  return { attributes: { [ATTR_ERROR_TYPE]: type }, message: stored(message) };
}
