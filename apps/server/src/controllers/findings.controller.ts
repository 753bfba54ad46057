import { Controller, Get, Param, Query, UseGuards, UseInterceptors } from '@nestjs/common';
import { DEFAULT_SCORECARD_TOOLS, FINDING_RULES, MAX_SCORECARD_TOOLS } from '@errata/domain';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { DocumentedQueryOnly } from '../http/documented-query.interceptor';
import { ReadAdmitted } from '../http/read-admission.interceptor';
import { ApiKeyGuard, CurrentPrincipal, RequireScope } from '../http/api-key.guard';
import {
  ApiGroupPage,
  ApiListPage,
  ApiReadKey,
  ApiReportFilters,
  ApiWindow,
  QueryParameter,
} from '../http/openapi';
import { ApiErrors, ApiOk } from '../http/openapi-schemas';
import { DEFAULT_LIMIT, FINDING_ID_FORM, parseFindingId, parsePage } from '../http/findings-page';
import {
  MAX_NAME_SEARCH,
  MAX_NAMES,
  parseNamesQuery,
  parseReportFilter,
  parseScorecardQuery,
} from '../http/report-query';
import type { Principal } from '../services/api-key.service';
import { FindingsService } from '../services/findings.service';

@ApiTags('findings')
@ApiReadKey()
@Controller('api/v1')
@UseGuards(ApiKeyGuard)
@UseInterceptors(DocumentedQueryOnly, ReadAdmitted)
@RequireScope('read')
export class FindingsController {
  constructor(private readonly findings: FindingsService) {}

  @Get('servers')
  @ApiOperation({ summary: 'A graded scorecard per MCP server and tool' })
  @ApiReportFilters()
  @ApiGroupPage()
  @QueryParameter({
    name: 'toolLimit',
    required: false,
    description:
      "Tools listed per server: those with the most violating calls, then the most calls, then by name; each server's `toolCount` says how many it has.",
    schema: { type: 'integer', minimum: 1, maximum: MAX_SCORECARD_TOOLS, default: DEFAULT_SCORECARD_TOOLS },
  })
  @QueryParameter({
    name: 'toolOffset',
    required: false,
    description:
      "Tools to skip first, per server, in that order: with `toolLimit`, a page of a server's tools (`toolCount` says how many it has; a page past them lists none).",
    schema: { type: 'integer', minimum: 0, default: 0 },
  })
  @ApiOk('ServerScorecard')
  @ApiErrors(400, 401, 403)
  servers(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    return this.findings.servers(principal.projectId, parseScorecardQuery(query));
  }

  @Get('names')
  @ApiOperation({
    summary: 'The server, tool and agent names of the window, to filter by',
    description:
      "Names only, for a filter's choices: the servers with calls in the window (null for the calls whose server did not say its name), the tool names of `server`'s calls, or of every server's without it, and the agents whose runs made calls or escalations or sent subagent reports in the window (each by its `gen_ai.agent.name`, or its `gen_ai.agent.id` when it has no name: what `agent` selects it by). Each list is by name and holds its first `limit` names; `serverCount`, `toolCount` and `agentCount` say how many there are. `search` keeps the names that contain a text, in any case: how a filter finds a name beyond the first `limit`.",
  })
  @ApiWindow()
  @QueryParameter({
    name: 'server',
    required: false,
    description:
      'Lists the tools of this MCP server’s calls only (`(unknown)`: those of the calls whose server did not say its name, as the reports label them); the servers and agents are listed all the same.',
    schema: { type: 'string' },
  })
  @QueryParameter({
    name: 'search',
    required: false,
    description:
      'Lists (and counts) only the names that contain this text, letters in any case: `ord` finds `lookup_order` and `Order-API`. The unnamed server is matched by its label, `(unknown)`. For a filter with more names than `limit`: type part of a name, get the names that hold it. At most 256 characters (a name is stored cut to 256 bytes).',
    schema: { type: 'string', maxLength: MAX_NAME_SEARCH },
  })
  @QueryParameter({
    name: 'limit',
    required: false,
    description: 'Names listed per list at most, by name.',
    schema: { type: 'integer', minimum: 1, maximum: MAX_NAMES, default: MAX_NAMES },
  })
  @ApiOk('CallNames')
  @ApiErrors(400, 401, 403)
  names(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    return this.findings.names(principal.projectId, parseNamesQuery(query));
  }

  @Get('findings')
  @ApiOperation({ summary: 'Error-contract findings per server, tool and rule (DOMAIN.md §7)' })
  @ApiReportFilters()
  @QueryParameter({ name: 'rule', required: false, enum: FINDING_RULES })
  @ApiListPage(DEFAULT_LIMIT)
  @ApiOk('FindingsPage')
  @ApiErrors(400, 401, 403)
  list(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    const { rule, limit, offset, ...filters } = query;
    return this.findings.list(
      principal.projectId,
      parseReportFilter(filters),
      parsePage(rule, limit, offset),
    );
  }

  @Get('findings/:id')
  @ApiOperation({ summary: 'One finding with its evidence and redacted samples' })
  @ApiParam({ name: 'id', description: `A finding id (${FINDING_ID_FORM})` })
  @ApiReportFilters()
  @ApiOk('FindingDetail')
  @ApiErrors(400, 401, 403, 404)
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.findings.get(principal.projectId, parseFindingId(id), parseReportFilter(query));
  }
}
