import {
  DEFAULT_SCORECARD_TOOLS,
  DEFAULT_SERIES_GROUPS,
  MAX_NAME_BYTES,
  MAX_SCORECARD_TOOLS,
  MAX_SERIES_GROUPS,
  MAX_SERIES_POINTS,
  parseQueryInstant,
  seriesLength,
  storedName,
  type SeriesStep,
} from '@errata/domain';
import { BadRequestException } from '@nestjs/common';
import { DEFAULT_LIMIT, parseLimitOffset, wholeNumber } from './findings-page';
import { oneOfRefusal, refuseNul, refuseRepeated } from './text-parameter';

/** The filters every report accepts (DOMAIN.md §8). */
export interface ReportFilter {
  readonly from: Date | null;
  readonly to: Date | null;
  readonly server: string | null;
  readonly tool: string | null;
  readonly agent: string | null;
}

/** The filters and the grouping of a report that has one. */
export interface ReportQuery<GroupBy extends string> extends ReportFilter {
  readonly groupBy: GroupBy;
}

type RawQuery = Record<string, unknown>;

/** Parses and checks report parameters, answering 400 with what was wrong. */
export function parseReportQuery<GroupBy extends string>(
  raw: RawQuery,
  groupings: readonly GroupBy[],
  defaultGroup: GroupBy,
): ReportQuery<GroupBy> {
  const groupBy = text(raw, 'groupBy') ?? defaultGroup;
  if (!groupings.includes(groupBy as GroupBy)) {
    throw new BadRequestException(oneOfRefusal('groupBy', groupings, groupBy));
  }
  const { groupBy: _given, ...filters } = raw;
  return { ...parseReportFilter(filters), groupBy: groupBy as GroupBy };
}

/**
 * The filters of a report. Parameters a route does not take are refused before this (`DocumentedQueryOnly`, and
 * the MCP tools' strict input schemas), a `groupBy` on a report without one included.
 */
export function parseReportFilter(raw: RawQuery): ReportFilter {
  const from = date(raw, 'from');
  const to = date(raw, 'to');
  if (from && to && from >= to) throw new BadRequestException('"from" must be before "to"');
  return { from, to, server: name(raw, 'server'), tool: name(raw, 'tool'), agent: name(raw, 'agent') };
}

/** A server, tool or agent name, cut as the names it is compared with were stored: a longer name still selects them. */
function name(raw: RawQuery, parameter: string): string | null {
  const value = text(raw, parameter);
  return value === null ? null : storedName(value);
}

function text(raw: RawQuery, name: string): string | null {
  const value = raw[name];
  if (value === undefined || value === '') return null;
  refuseRepeated(value, name);
  if (typeof value !== 'string') throw new BadRequestException(`"${name}" must be a text`);
  return refuseNul(value, name);
}

function date(raw: RawQuery, name: string): Date | null {
  const value = text(raw, name);
  if (value === null) return null;
  const parsed = parseQueryInstant(value);
  if (parsed === null) {
    throw new BadRequestException(
      `"${name}" must be an ISO-8601 date or date-time such as 2026-11-30 or 2026-11-30T00:00:00Z; got "${value}"`,
    );
  }
  // A window bound is kept to the millisecond: finer digits would be cut off, and a call started within that
  // millisecond would fall on the wrong side of the bound.
  if (/\.\d{3}\d*[1-9]/.test(value)) {
    throw new BadRequestException(
      `"${name}" may be given to the millisecond at most (such as 2026-11-30T12:00:00.123Z); got "${value}"`,
    );
  }
  return parsed;
}

/** A series: the filters, a bounded window, its bucket size and how its breakdown is grouped and bounded. */
export interface SeriesQuery<GroupBy extends string> extends ReportQuery<GroupBy> {
  readonly from: Date;
  readonly to: Date;
  readonly step: SeriesStep;
  /** The breakdown's groups to keep (`boundSeriesGroups`); the others are folded. */
  readonly groupLimit: number;
}

/** Windows up to this long are cut into hours by default, longer ones into days. */
const HOURLY_UP_TO_MS = 72 * 3_600_000;

export function parseSeriesQuery<GroupBy extends string>(
  raw: RawQuery,
  groupings: readonly GroupBy[],
  defaultGroup: GroupBy,
  now: Date = new Date(),
): SeriesQuery<GroupBy> {
  const { step: rawStep, groupLimit: rawGroupLimit, ...rest } = raw;
  const query = parseReportQuery(rest, groupings, defaultGroup);
  const groupLimit = wholeNumber(rawGroupLimit, 'groupLimit', DEFAULT_SERIES_GROUPS, 1, MAX_SERIES_GROUPS);
  if (query.from === null)
    throw new BadRequestException('a series needs "from" (ISO-8601, a date or a date-time)');
  const to = query.to ?? now;
  if (query.from >= to) throw new BadRequestException('"from" must be before "to" (which defaults to now)');
  const step =
    text({ step: rawStep }, 'step') ??
    (to.getTime() - query.from.getTime() <= HOURLY_UP_TO_MS ? 'hour' : 'day');
  if (step !== 'hour' && step !== 'day') {
    throw new BadRequestException(oneOfRefusal('step', ['hour', 'day'], step));
  }
  const points = seriesLength(query.from, to, step);
  if (points > MAX_SERIES_POINTS) {
    // Days are the longest step: a window of more days than that has only a shorter window to offer.
    const instead = step === 'hour' ? 'use a shorter window or step=day' : 'use a shorter window';
    throw new BadRequestException(
      `the window has ${points} ${step}s; a series has at most ${MAX_SERIES_POINTS} points (${instead})`,
    );
  }
  return { ...query, from: query.from, to, step, groupLimit };
}

/** Which of a report's groups to answer: `limit` of them (1–500, default 50) after `offset`, in the report's order. */
export interface GroupPage {
  readonly limit: number;
  readonly offset: number;
}

/**
 * A grouped report's parameters (`parse`) and its page of groups. Grouped by tool, a project can have as many groups
 * as names its ingest keys sent; all of them made answers of tens of megabytes.
 */
export function withGroupPage<Query>(
  raw: RawQuery,
  parse: (rest: RawQuery) => Query,
): Query & { readonly page: GroupPage } {
  const { limit, offset, ...rest } = raw;
  return { ...parse(rest), page: parseLimitOffset(limit, offset, DEFAULT_LIMIT) };
}

/**
 * `GET /servers`: the filters, the page of servers, and the tools listed per server (`toolLimit`, 1–500, default
 * 50, after the first `toolOffset`, default 0): a server with thousands of tools made an answer of megabytes, and
 * `toolOffset` pages through them.
 */
export function parseScorecardQuery(raw: RawQuery) {
  const { toolLimit, toolOffset, ...rest } = raw;
  return {
    ...withGroupPage(rest, parseReportFilter),
    toolLimit: wholeNumber(toolLimit, 'toolLimit', DEFAULT_SCORECARD_TOOLS, 1, MAX_SCORECARD_TOOLS),
    toolOffset: wholeNumber(toolOffset, 'toolOffset', 0, 0, Number.MAX_SAFE_INTEGER),
  };
}

/** Names `GET /names` lists at most per list: more than a dropdown can offer anyway, and an answer of kilobytes. */
export const MAX_NAMES = 1_000;

/**
 * The longest `search` of `GET /names`, in characters: a name is stored cut to MAX_NAME_BYTES (256) bytes, so no
 * longer text can be part of one.
 */
export const MAX_NAME_SEARCH = MAX_NAME_BYTES;

/**
 * `GET /names`: the window, the server whose tools to list (every server's without it), the text the names must
 * contain (`search`, any case; null: every name), and the names per list.
 */
export interface NamesQuery {
  readonly from: Date | null;
  readonly to: Date | null;
  readonly server: string | null;
  readonly search: string | null;
  readonly limit: number;
}

export function parseNamesQuery(raw: RawQuery): NamesQuery {
  const { limit, search: rawSearch, ...rest } = raw;
  const { from, to, server } = parseReportFilter(rest);
  const search = text({ search: rawSearch }, 'search');
  if (search !== null && search.length > MAX_NAME_SEARCH) {
    throw new BadRequestException(
      `"search" may be ${MAX_NAME_SEARCH} characters at most (a name is stored cut to ${MAX_NAME_BYTES} bytes); got ${search.length}`,
    );
  }
  return { from, to, server, search, limit: wholeNumber(limit, 'limit', MAX_NAMES, 1, MAX_NAMES) };
}
