import { BadRequestException } from '@nestjs/common';

/**
 * A text a client sent, as PostgreSQL can take it: its text type cannot hold U+0000, so a NUL would fail the query
 * (a 500) where the client needs to hear which parameter was wrong. Stored texts from OTLP get U+FFFD in its place
 * instead (`withoutNul`), since a span is stored rather than refused; a filter or a field of a request is refused.
 */
export function refuseNul(value: string, name: string): string {
  if (value.includes('\u0000')) {
    throw new BadRequestException(`"${name}" must not contain a NUL character (U+0000)`);
  }
  return value;
}

/** A query parameter given twice or more (`?limit=1&limit=2`) arrives as a list: which one was meant is unknown. */
export function refuseRepeated(value: unknown, name: string): void {
  if (Array.isArray(value)) throw new BadRequestException(`"${name}" must be given once`);
}

/**
 * How a parameter a route does not take is refused (the first such, with those it takes): REST says it of a query
 * parameter and an endpoint, MCP of an argument and a tool.
 */
export function unknownParameterRefusal(
  unknown: string,
  taken: readonly string[],
  [parameter, taker]: readonly [string, string] = ['query parameter', 'endpoint'],
): string {
  return (
    `unknown ${parameter} "${unknown}"; ` +
    (taken.length === 0 ? `this ${taker} takes none` : `this ${taker} takes ${taken.join(', ')}`)
  );
}

/** How a parameter that names none of its choices is refused: REST and MCP say the same. */
export const oneOfRefusal = (name: string, choices: readonly string[], given: unknown) =>
  `"${name}" must be one of ${choices.join(', ')}; got ${JSON.stringify(given)}`;

/**
 * An optional query parameter that names one of `choices`: null when not given (or given empty, as every empty
 * parameter); a 400 saying the choices when it names none of them or is given twice.
 */
export function optionalChoice<T extends string>(
  value: unknown,
  name: string,
  choices: readonly T[],
): T | null {
  refuseRepeated(value, name);
  if (value === undefined || value === '') return null;
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) {
    throw new BadRequestException(oneOfRefusal(name, choices, value));
  }
  return value as T;
}
