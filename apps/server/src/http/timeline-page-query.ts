import { BadRequestException } from '@nestjs/common';
import {
  parseTimelineCursor,
  TIMELINE_PAGE_DEFAULT,
  TIMELINE_PAGE_MAX,
  type TimelinePageRequest,
  type TimelinePosition,
} from '@errata/domain';
import { wholeNumber } from './findings-page';
import { refuseNul, refuseRepeated } from './text-parameter';

const SPAN_ID = /^[0-9a-f]{16}$/;

/** A text parameter given once, or undefined when not given or empty (as every other empty parameter). */
function text(value: unknown, name: string): string | undefined {
  refuseRepeated(value, name);
  if (value === undefined || value === '') return undefined;
  return refuseNul(String(value), name);
}

function cursor(value: string, name: string) {
  const key = parseTimelineCursor(value);
  if (key === null) {
    throw new BadRequestException(
      `"${name}" must be a cursor a timeline page handed out (its page.before or page.after), got "${value}"`,
    );
  }
  return key;
}

/** The largest `runOffset` taken: far past any trace's runs, and short enough to read in a 400's message. */
const RUN_OFFSET_MAX = 1_000_000_000;

/**
 * Parses a timeline page's `limit`, `run`, `after`, `before`, `span` and `runOffset`, answering 400 with what was
 * wrong.
 */
export function parseTimelinePage(query: {
  limit?: unknown;
  run?: unknown;
  runOffset?: unknown;
  after?: unknown;
  before?: unknown;
  span?: unknown;
}): TimelinePageRequest {
  const limit = wholeNumber(query.limit, 'limit', TIMELINE_PAGE_DEFAULT, 1, TIMELINE_PAGE_MAX);
  const run = text(query.run, 'run') ?? null;
  const [after, before, span] = (['after', 'before', 'span'] as const).map((name) => text(query[name], name));
  if ([after, before, span].filter((given) => given !== undefined).length > 1) {
    throw new BadRequestException(
      '"after", "before" and "span" each say where the page is: give one of them',
    );
  }
  if (span !== undefined && !SPAN_ID.test(span)) {
    throw new BadRequestException(`"span" must be a span id (16 lowercase hex digits), got "${span}"`);
  }
  const position: TimelinePosition =
    after !== undefined
      ? { from: 'after', cursor: cursor(after, 'after') }
      : before !== undefined
        ? { from: 'before', cursor: cursor(before, 'before') }
        : span !== undefined
          ? { from: 'span', spanId: span }
          : { from: 'start' };
  const runOffset =
    query.runOffset === undefined || query.runOffset === ''
      ? null
      : wholeNumber(query.runOffset, 'runOffset', 0, 0, RUN_OFFSET_MAX);
  return { limit, run, position, runOffset };
}
