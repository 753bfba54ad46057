import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { toolErrorAttributes as attributesWith, type ToolErrorOptions } from './tool-error';

const NOT_ABORTED: ToolErrorOptions = { textLimitBytes: 2048, aborted: false };
const toolErrorAttributes = (error: unknown) => attributesWith(error, NOT_ABORTED);

describe('toolErrorAttributes', () => {
  it('the SDK timeout (-32001) is error.type timeout, with no response code', () => {
    expect(toolErrorAttributes(new McpError(ErrorCode.RequestTimeout, 'Request timed out'))).toEqual({
      attributes: { 'error.type': 'timeout' },
      message: 'MCP error -32001: Request timed out',
    });
  });

  it('a closed connection (-32000) keeps its code as error.type, with no response code', () => {
    expect(toolErrorAttributes(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'))).toEqual({
      attributes: { 'error.type': '-32000' },
      message: 'MCP error -32000: Connection closed',
    });
  });

  it('a JSON-RPC error response: the code as error.type and rpc.response.status_code, message without the prefix', () => {
    expect(toolErrorAttributes(new McpError(ErrorCode.InvalidParams, 'Unknown tool: nope'))).toEqual({
      attributes: { 'error.type': '-32602', 'rpc.response.status_code': '-32602' },
      message: 'Unknown tool: nope',
    });
  });

  it('a network failure is named by its code, or its cause’s', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    const fetchFailed = new TypeError('fetch failed', { cause });
    expect(toolErrorAttributes(fetchFailed).attributes).toEqual({ 'error.type': 'ECONNREFUSED' });
  });

  it('an HTTP error status answered to an HTTP transport: its class as error.type, the status as http.response.status_code', () => {
    const sessionGone = new StreamableHTTPError(404, 'Error POSTing to endpoint: Session not found');
    expect(toolErrorAttributes(sessionGone)).toEqual({
      attributes: { 'error.type': 'StreamableHTTPError', 'http.response.status_code': 404 },
      message: 'Streamable HTTP error: Error POSTing to endpoint: Session not found',
    });
    expect(toolErrorAttributes(new SseError(503, 'Service Unavailable', undefined)).attributes).toEqual({
      'error.type': 'SseError',
      'http.response.status_code': 503,
    });
    // No status to blame (an unexpected content type): -1 is not sent.
    const contentType = new StreamableHTTPError(-1, 'Unexpected content type: text/html');
    expect(toolErrorAttributes(contentType).attributes).toEqual({ 'error.type': 'StreamableHTTPError' });
  });

  it('an error whose name is only "Error" is named by its class, unless that reads like a minified name', () => {
    expect(toolErrorAttributes(new UnauthorizedError('No auth provider'))).toEqual({
      attributes: { 'error.type': 'UnauthorizedError' },
      message: 'No auth provider',
    });
    const minified = new (class e extends Error {})('boom');
    expect(toolErrorAttributes(minified).attributes).toEqual({ 'error.type': 'Error' });
  });

  it('other exceptions by name; non-errors as _OTHER', () => {
    expect(toolErrorAttributes(new RangeError('bad')).attributes).toEqual({ 'error.type': 'RangeError' });
    expect(toolErrorAttributes('a string')).toEqual({
      attributes: { 'error.type': '_OTHER' },
      message: 'a string',
    });
  });

  it('messages are redacted', () => {
    expect(toolErrorAttributes(new Error('login failed for bob@example.com')).message).not.toContain(
      'bob@example.com',
    );
  });

  it('a call the host cancelled is named by its signal’s reason, although SDK 1.2x rejects it as an McpError -32001', () => {
    const controller = new AbortController();
    controller.abort();
    const wrapped = new McpError(ErrorCode.RequestTimeout, String(controller.signal.reason));
    expect(wrapped.message).toBe('MCP error -32001: AbortError: This operation was aborted');
    expect(
      attributesWith(wrapped, { ...NOT_ABORTED, aborted: true, abortReason: controller.signal.reason }),
    ).toEqual({
      attributes: { 'error.type': 'AbortError' },
      message: 'AbortError: This operation was aborted',
    });
    const timedOut = AbortSignal.abort(new DOMException('The operation timed out.', 'TimeoutError'));
    expect(
      attributesWith(new McpError(ErrorCode.RequestTimeout, String(timedOut.reason)), {
        ...NOT_ABORTED,
        aborted: true,
        abortReason: timedOut.reason,
      }).attributes,
    ).toEqual({ 'error.type': 'TimeoutError' });
    expect(
      attributesWith(new McpError(ErrorCode.RequestTimeout, 'user closed the tab'), {
        ...NOT_ABORTED,
        aborted: true,
        abortReason: 'user closed the tab',
      }),
    ).toEqual({ attributes: { 'error.type': 'AbortError' }, message: 'user closed the tab' });
  });

  it('messages are cut to the text limit, as every text sent', () => {
    const long = new McpError(ErrorCode.InvalidParams, `Invalid arguments: ${'x'.repeat(10_000)}`);
    const { message } = attributesWith(long, { ...NOT_ABORTED, textLimitBytes: 100 });
    expect(Buffer.byteLength(message)).toBeLessThanOrEqual(100);
    expect(message).toMatch(/^Invalid arguments: x+/);
  });
});
