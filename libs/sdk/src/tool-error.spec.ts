import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { toolErrorAttributes } from './tool-error';

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
});
