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

/** A trace id (`traceId`), and how the answers that refuse another one describe it. */
export const TRACE_ID = /^[0-9a-f]{32}$/;
export const TRACE_ID_FORM = '32 lowercase hex digits';

/** A span id (`span`), and how the answers that refuse another one describe it. */
export const SPAN_ID = /^[0-9a-f]{16}$/;
export const SPAN_ID_FORM = '16 lowercase hex digits';

/** How a trace id that is none is refused: REST and MCP say the same. */
export const traceIdRefusal = (traceId: string) => `"${traceId}" is not a trace id (${TRACE_ID_FORM})`;

/** How a `span` that is no span id is refused: REST and MCP say the same. */
export const spanIdRefusal = (span: string) => `"span" must be a span id (${SPAN_ID_FORM}), got "${span}"`;

/** A trace's id as given in a timeline's address, answering 400 when it is none. */
export function parseTraceId(traceId: string): string {
  if (!TRACE_ID.test(traceId)) throw new BadRequestException(traceIdRefusal(traceId));
  return traceId;
}

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
export const RUN_OFFSET_MAX = 1_000_000_000;

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
    throw new BadRequestException(spanIdRefusal(span));
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
