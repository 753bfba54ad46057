import { BadRequestException, Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { FINDING_RULES, type FindingRule } from '@errata/domain';
import { ApiKeyGuard, CurrentPrincipal, RequireScope } from '../http/api-key.guard';
import { parseReportFilter } from '../http/report-query';
import type { Principal } from '../services/api-key.service';
import { FindingsService, type FindingsPage } from '../services/findings.service';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;

@Controller('api/v1')
@UseGuards(ApiKeyGuard)
@RequireScope('read')
export class FindingsController {
  constructor(private readonly findings: FindingsService) {}

  @Get('servers')
  servers(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    return this.findings.servers(principal.projectId, parseReportFilter(query));
  }

  @Get('findings')
  list(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    const { rule, limit, offset, ...filters } = query;
    return this.findings.list(
      principal.projectId,
      parseReportFilter(filters),
      parsePage(rule, limit, offset),
    );
  }

  @Get('findings/:id')
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
  ) {
    if (!/^[0-9a-f]{20}$/.test(id))
      throw new BadRequestException(`"${id}" is not a finding id (20 hex digits)`);
    return this.findings.get(principal.projectId, id, parseReportFilter(query));
  }
}

function integer(value: unknown, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const parsed = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw new BadRequestException(`"${name}" must be a whole number from ${min} to ${max}`);
  }
  return parsed;
}

function parsePage(rule: unknown, limit: unknown, offset: unknown): FindingsPage {
  if (
    rule !== undefined &&
    (typeof rule !== 'string' || !(FINDING_RULES as readonly string[]).includes(rule))
  ) {
    throw new BadRequestException(`"rule" must be one of ${FINDING_RULES.join(', ')}`);
  }
  return {
    rule: (rule as FindingRule | undefined) ?? null,
    limit: integer(limit, 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT),
    offset: integer(offset, 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
  };
}
