import { BadRequestException } from '@nestjs/common';

/** The query parameters every report accepts (DOMAIN.md §8). */
export interface ReportQuery<GroupBy extends string = never> {
  readonly from: Date | null;
  readonly to: Date | null;
  readonly server: string | null;
  readonly tool: string | null;
  readonly agent: string | null;
  readonly groupBy: GroupBy;
}

type RawQuery = Record<string, unknown>;

/** Parses and checks report parameters, answering 400 with what was wrong. */
export function parseReportQuery<GroupBy extends string>(
  raw: RawQuery,
  groupings: readonly GroupBy[],
  defaultGroup: GroupBy,
): ReportQuery<GroupBy> {
  const from = date(raw, 'from');
  const to = date(raw, 'to');
  if (from && to && from >= to) throw new BadRequestException('"from" must be before "to"');
  const groupBy = text(raw, 'groupBy') ?? defaultGroup;
  if (!groupings.includes(groupBy as GroupBy)) {
    throw new BadRequestException(`"groupBy" must be one of ${groupings.join(', ')}; got "${groupBy}"`);
  }
  return {
    from,
    to,
    server: text(raw, 'server'),
    tool: text(raw, 'tool'),
    agent: text(raw, 'agent'),
    groupBy: groupBy as GroupBy,
  };
}

function text(raw: RawQuery, name: string): string | null {
  const value = raw[name];
  if (value === undefined || value === '') return null;
  if (typeof value !== 'string') throw new BadRequestException(`"${name}" must be given once`);
  return value;
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

function date(raw: RawQuery, name: string): Date | null {
  const value = text(raw, name);
  if (value === null) return null;
  const parsed = new Date(value);
  if (!ISO_8601.test(value) || Number.isNaN(parsed.getTime())) {
    throw new BadRequestException(
      `"${name}" must be an ISO-8601 date-time such as 2026-11-30T00:00:00Z; got "${value}"`,
    );
  }
  return parsed;
}
