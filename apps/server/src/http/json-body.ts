import { BadRequestException, PayloadTooLargeException } from '@nestjs/common';
import type { Request } from 'express';
import { BodyTooLargeError, readRequestBody } from './read-request-body';
import { refuseNul } from './text-parameter';

/**
 * A JSON object body (Nest's own body parsers are off) holding only `fields`, or 400 saying what is wrong with it. A
 * field the route does not know is refused, as a query parameter is: `version_range` for `versionRange` would
 * otherwise register an owner for every version without a word. No body is an empty object; a route that takes no
 * fields (`[]`) refuses any, so that `{"by":"alice"}` is not recorded as someone else's acknowledgement.
 */
export async function readJsonObject(
  request: Request,
  fields: readonly string[],
  limit = 64 * 1024,
): Promise<Record<string, unknown>> {
  let raw: Buffer;
  try {
    raw = await readRequestBody(request, limit);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new PayloadTooLargeException(error.message);
    throw new BadRequestException(error instanceof Error ? error.message : String(error));
  }
  let parsed: unknown;
  try {
    parsed = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'));
  } catch {
    throw new BadRequestException('the body must be JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new BadRequestException('the body must be a JSON object');
  }
  const unknown = Object.keys(parsed).find((name) => !fields.includes(name));
  if (unknown !== undefined) {
    const taken = fields.length === 0 ? 'no fields' : fields.map((name) => `"${name}"`).join(', ');
    throw new BadRequestException(`unknown field ${JSON.stringify(unknown)}: the body takes ${taken}`);
  }
  return parsed as Record<string, unknown>;
}

export function optionalText(body: Record<string, unknown>, name: string): string | null {
  const value = body[name];
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw new BadRequestException(`"${name}" must be a string`);
  return refuseNul(value.trim(), name);
}

/**
 * A string field as given, empty included (null when absent or null): for a field whose empty value means something
 * other than its absence, so that the service can refuse it.
 */
export function givenText(body: Record<string, unknown>, name: string): string | null {
  const value = body[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new BadRequestException(`"${name}" must be a string`);
  return refuseNul(value, name);
}

export function requiredText(body: Record<string, unknown>, name: string): string {
  const value = optionalText(body, name);
  if (value === null) throw new BadRequestException(`"${name}" is required`);
  return value;
}
