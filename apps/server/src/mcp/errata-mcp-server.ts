import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../services/api-key.service';
import { SERVER_VERSION } from '../version';
import { registerFindingTools } from './finding-tools';
import { registerReportTools } from './report-tools';
import { answerInvalidParams, refuseUnknownTools, sdkToolError } from './tool-errors';
import { admitted, mirrored, type ErrataMcpServices, type ToolCall } from './tool-envelope';
import { registerTraceTools } from './trace-tools';

/**
 * One MCP server per request (stateless Streamable HTTP), bound to the caller's project. Its tools are registered by
 * area, as REST's controllers are: the reports, the scorecard and findings, a trace's timeline.
 */
export function errataMcpServer(services: ErrataMcpServices, principal: Principal): McpServer {
  const server = new McpServer({ name: 'errata', version: SERVER_VERSION });
  // Private in the SDK's types, and what its tools/call handler answers those failures with: they get the envelope.
  (server as unknown as { createToolError(message: string): CallToolResult }).createToolError = (message) =>
    mirrored({ ok: false, data: null, error: sdkToolError(message) });
  const read = (call: ToolCall, body: () => Promise<unknown>) => admitted(services.reads, call, body);
  const tools = { server, services, principal, read };
  registerReportTools(tools);
  registerFindingTools(tools);
  registerTraceTools(tools);
  // Stateless, one server per request with no stream to send on (GET /mcp 405): it can never send
  // notifications/tools/list_changed, which the SDK advertises for every server with tools.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  refuseUnknownTools(server);
  answerInvalidParams(server);
  return server;
}
