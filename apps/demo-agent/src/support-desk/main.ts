/** `node apps/demo-agent/dist/support-desk/main.js`: the support-desk MCP server over stdio. */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createSupportDeskServer } from './support-desk.server';

createSupportDeskServer()
  .connect(new StdioServerTransport())
  .catch((error: unknown) => {
    process.stderr.write(
      `support-desk failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  });
