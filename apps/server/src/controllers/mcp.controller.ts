import { Controller, Delete, Get, HttpCode, Post, Req, Res, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Request, Response } from 'express';
import { ApiKeyGuard, CurrentPrincipal, RequireScope } from '../http/api-key.guard';
import { errataMcpServer } from '../mcp/errata-mcp-server';
import { AgentReportsService } from '../services/agent-reports.service';
import type { Principal } from '../services/api-key.service';
import { FindingsService } from '../services/findings.service';
import { FixService } from '../services/fix.service';
import { ReadAdmission } from '../services/read-admission';
import { RetryWasteService } from '../services/retry-waste.service';
import { TraceTimelineService } from '../services/trace-timeline.service';

/**
 * Errata as an MCP server: Streamable HTTP at `/mcp`, stateless (a server and transport per request, no session),
 * a read key per request. The tools read the caller's project only, each in a place among
 * ERRATA_MAX_CONCURRENT_READS (ReadAdmission), as REST's reads.
 */
@ApiExcludeController()
@Controller('mcp')
@UseGuards(ApiKeyGuard)
@RequireScope('read')
export class McpController {
  constructor(
    private readonly retryWaste: RetryWasteService,
    private readonly agentReports: AgentReportsService,
    private readonly findings: FindingsService,
    private readonly fixes: FixService,
    private readonly timelines: TraceTimelineService,
    private readonly reads: ReadAdmission,
  ) {}

  @Post()
  async handle(@CurrentPrincipal() principal: Principal, @Req() request: Request, @Res() response: Response) {
    const server = errataMcpServer(
      {
        retryWaste: this.retryWaste,
        agentReports: this.agentReports,
        findings: this.findings,
        fixes: this.fixes,
        timelines: this.timelines,
        reads: this.reads,
      },
      principal,
    );
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    // Closing the server aborts the signal of each tool call still running or waiting for a read place.
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  }

  /** No sessions and no server-initiated stream: only POST. */
  @Get()
  @HttpCode(405)
  noStream(@Res({ passthrough: true }) response: Response) {
    return postOnly(response);
  }

  @Delete()
  @HttpCode(405)
  noSession(@Res({ passthrough: true }) response: Response) {
    return postOnly(response);
  }
}

function postOnly(response: Response) {
  response.setHeader('allow', 'POST');
  return {
    jsonrpc: '2.0',
    error: {
      code: -32000,
      message: 'Errata serves MCP statelessly: send each JSON-RPC message with POST /mcp',
    },
    id: null,
  };
}
