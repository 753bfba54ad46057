/**
 * A `tools/call` that threw instead of returning a result (research/otel_mcp_spec.md §1.3, §6): a JSON-RPC error
 * response, the SDK's own timeout (-32001) or closed connection (-32000), or a transport exception.
 */
import type { Attributes } from '@opentelemetry/api';
import { isRecord, JSONRPC_CONNECTION_CLOSED, JSONRPC_REQUEST_TIMEOUT, redact } from '@errata/domain';
import { ATTR_ERROR_TYPE, ATTR_RPC_RESPONSE_STATUS_CODE } from './semconv';

export interface ToolErrorAttributes {
  readonly attributes: Attributes;
  /** The span status description: the JSON-RPC message without the SDK's "MCP error <code>: " prefixes (a server on the SDK adds one, the client another), redacted. */
  readonly message: string;
}

const MCP_ERROR_PREFIX = /^(?:MCP error -?\d+:\s*)+/;

/** A low-cardinality name for a non-MCP exception: its code (ECONNREFUSED, UND_ERR_…), its cause's, or its name. */
function exceptionType(error: Record<string, unknown>): string {
  const cause = isRecord(error['cause']) ? error['cause'] : null;
  for (const value of [error['code'], cause?.['code']]) {
    if (typeof value === 'string' && value !== '') return value;
  }
  return typeof error['name'] === 'string' && error['name'] !== '' ? error['name'] : '_OTHER';
}

function messageOf(error: unknown): string {
  if (isRecord(error) && typeof error['message'] === 'string') return error['message'];
  return String(error);
}

export function toolErrorAttributes(error: unknown): ToolErrorAttributes {
  const message = messageOf(error);
  const code = isRecord(error) && Number.isInteger(error['code']) ? (error['code'] as number) : null;
  const isMcpError = code !== null && MCP_ERROR_PREFIX.test(message);
  if (isMcpError && code === JSONRPC_REQUEST_TIMEOUT) {
    return { attributes: { [ATTR_ERROR_TYPE]: 'timeout' }, message: redact(message) };
  }
  if (isMcpError && code === JSONRPC_CONNECTION_CLOSED) {
    // An SDK-local code, not a server response: no rpc.response.status_code.
    return { attributes: { [ATTR_ERROR_TYPE]: String(code) }, message: redact(message) };
  }
  if (isMcpError) {
    return {
      attributes: { [ATTR_ERROR_TYPE]: String(code), [ATTR_RPC_RESPONSE_STATUS_CODE]: String(code) },
      message: redact(message.replace(MCP_ERROR_PREFIX, '')),
    };
  }
  const type = isRecord(error) ? exceptionType(error) : '_OTHER';
  return { attributes: { [ATTR_ERROR_TYPE]: type }, message: redact(message) };
}
