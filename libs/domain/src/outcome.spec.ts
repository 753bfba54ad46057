import { describe, expect, it } from 'vitest';

import { deriveOutcome, type OutcomeSignals } from './outcome';

const none: OutcomeSignals = {
  errorType: null,
  rpcStatusCode: null,
  isError: null,
  empty: null,
  itemCount: null,
  statusError: false,
  statusMessage: null,
};
const outcome = (signals: Partial<OutcomeSignals>) => deriveOutcome({ ...none, ...signals });

describe('deriveOutcome', () => {
  it('given a JSON-RPC code, then protocol_error, except -32001 (timeout) and -32000 (transport_error)', () => {
    expect(outcome({ rpcStatusCode: '-32602', errorType: '-32602', statusError: true })).toBe(
      'protocol_error',
    );
    expect(outcome({ errorType: '-32603' })).toBe('protocol_error');
    expect(outcome({ rpcStatusCode: '-32001' })).toBe('timeout');
    expect(outcome({ errorType: '-32000' })).toBe('transport_error');
  });

  it('given a code and an isError result, then the code wins (a JSON-RPC error carries no result)', () => {
    expect(outcome({ rpcStatusCode: '-32602', isError: true })).toBe('protocol_error');
  });

  it('given an McpError message and no result, then its code decides', () => {
    expect(outcome({ statusError: true, statusMessage: 'MCP error -32001: Request timed out' })).toBe(
      'timeout',
    );
    expect(outcome({ statusError: true, statusMessage: 'MCP error -32602: Unknown tool: x' })).toBe(
      'protocol_error',
    );
    expect(outcome({ isError: true, statusMessage: 'MCP error -32602: relayed by the tool' })).toBe(
      'tool_error',
    );
  });

  it('given error.type timeout (any usual spelling), or a cancellation (AbortError), then timeout', () => {
    for (const errorType of ['timeout', 'TimeoutError', 'REQUEST_TIMEOUT', 'AbortError']) {
      expect(outcome({ errorType })).toBe('timeout');
    }
  });

  it('given a network exception name, then transport_error', () => {
    for (const errorType of [
      'ECONNREFUSED',
      'ECONNRESET',
      'EPIPE',
      'ETIMEDOUT',
      'UND_ERR_SOCKET',
      'CONNECTION_CLOSED',
    ]) {
      expect(outcome({ errorType })).toBe('transport_error');
    }
    expect(outcome({ statusError: true, statusMessage: 'TypeError: fetch failed' })).toBe('transport_error');
    expect(outcome({ errorType: 'Error', statusMessage: 'socket hang up' })).toBe('transport_error');
    // The MCP SDK's call on a client whose transport is closed, or was never connected: nothing was sent.
    expect(outcome({ errorType: 'Error', statusError: true, statusMessage: 'Not connected' })).toBe(
      'transport_error',
    );
  });

  it('given an HTTP error status answered to the MCP SDK’s HTTP transports, then transport_error (no JSON-RPC response came)', () => {
    // SdkHttpError: the v2 client's (@modelcontextprotocol/client), for either transport.
    for (const errorType of ['StreamableHTTPError', 'SseError', 'SdkHttpError', 'UnauthorizedError']) {
      expect(outcome({ errorType, statusError: true })).toBe('transport_error');
    }
    // SDK builds that sent error.type Error: the message says it.
    const sessionGone =
      'Streamable HTTP error: Error POSTing to endpoint: {"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}';
    expect(outcome({ errorType: 'Error', statusError: true, statusMessage: sessionGone })).toBe(
      'transport_error',
    );
    expect(outcome({ errorType: 'Error', statusMessage: 'SSE error: Non-200 status code (502)' })).toBe(
      'transport_error',
    );
    expect(
      outcome({
        errorType: 'Error',
        statusMessage: 'Error POSTing to endpoint (HTTP 404): Session not found',
      }),
    ).toBe('transport_error');
  });

  it('given isError true or error.type tool_error, then tool_error', () => {
    expect(outcome({ isError: true })).toBe('tool_error');
    expect(outcome({ errorType: 'tool_error' })).toBe('tool_error');
    // A tool whose own upstream refused the connection still answered: a tool error, not a transport error.
    expect(outcome({ isError: true, statusError: true, statusMessage: 'upstream ECONNREFUSED' })).toBe(
      'tool_error',
    );
  });

  it('given a failure with no result and nothing more specific, then protocol_error', () => {
    expect(outcome({ statusError: true, statusMessage: 'internal_error' })).toBe('protocol_error');
    expect(outcome({ errorType: '_OTHER' })).toBe('protocol_error');
  });

  it('given a successful result, then ok, or ok_empty when it is empty or has 0 items', () => {
    expect(outcome({ isError: false })).toBe('ok');
    expect(outcome({})).toBe('ok');
    expect(outcome({ isError: false, empty: true })).toBe('ok_empty');
    expect(outcome({ isError: false, itemCount: 0 })).toBe('ok_empty');
    expect(outcome({ isError: false, empty: false, itemCount: 0 })).toBe('ok');
    expect(outcome({ isError: false, itemCount: 3 })).toBe('ok');
  });
});
