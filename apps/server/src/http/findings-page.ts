import { BadRequestException } from '@nestjs/common';
import { FINDING_RULES } from '@errata/domain';
import type { FindingsPage } from '../services/findings.service';
import { optionalChoice, refuseRepeated } from './text-parameter';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;

/** A finding id (`findingId`), and how the answers that refuse another one describe it. */
export const FINDING_ID = /^[0-9a-f]{20}$/;
export const FINDING_ID_FORM = '20 lowercase hex digits';

/** A finding's id as given in an address or a tool's arguments, answering 400 when it is none. */
export function parseFindingId(id: string): string {
  if (!FINDING_ID.test(id)) throw new BadRequestException(`"${id}" is not a finding id (${FINDING_ID_FORM})`);
  return id;
}

/** Parses `rule`, `limit` and `offset` of a findings list, answering 400 with what was wrong. */
export function parsePage(rule: unknown, limit: unknown, offset: unknown): FindingsPage {
  return {
    rule: optionalChoice(rule, 'rule', FINDING_RULES),
    ...parseLimitOffset(limit, offset, DEFAULT_LIMIT),
  };
}

/** Parses a list's `limit` (1 to MAX_LIMIT) and `offset`, answering 400 with what was wrong. */
export function parseLimitOffset(
  limit: unknown,
  offset: unknown,
  defaultLimit: number,
): { limit: number; offset: number } {
  return {
    limit: wholeNumber(limit, 'limit', defaultLimit, 1, MAX_LIMIT),
    offset: wholeNumber(offset, 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
  };
}

/** How a whole-number parameter out of its bounds (or not a whole number) is refused: REST and MCP say the same. */
export const wholeNumberRefusal = (name: string, min: number, max: number) =>
  `"${name}" must be a whole number from ${min} to ${max}`;

/** A whole-number parameter from `min` to `max` (`fallback` when not given), answering 400 with what was wrong. */
export function wholeNumber(
  value: unknown,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined || value === '') return fallback;
  refuseRepeated(value, name);
  const parsed =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\d+$/.test(value)
        ? Number(value)
        : Number.NaN;
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw new BadRequestException(wholeNumberRefusal(name, min, max));
  }
  return parsed;
}
