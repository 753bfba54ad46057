/** The bundled `support-desk` MCP server: the seeds' scenarios, each tool's contract good or bad on purpose. */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AttemptCounter } from './attempt-counter';
import { registerCustomerTools } from './customers.tools';
import { registerOrderTools } from './orders.tools';
import { registerResearchTools } from './research.tools';
import { registerTicketTools } from './tickets.tools';

const SUPPORT_DESK_NAME = 'support-desk';
const SUPPORT_DESK_VERSION = '1.0.0';

export function createSupportDeskServer(): McpServer {
  const server = new McpServer({ name: SUPPORT_DESK_NAME, version: SUPPORT_DESK_VERSION });
  // One counter per server process: the simulated flakiness starts afresh with every process.
  const attempts = new AttemptCounter();
  registerOrderTools(server, attempts);
  registerCustomerTools(server);
  registerTicketTools(server);
  registerResearchTools(server, attempts);
  return server;
}
