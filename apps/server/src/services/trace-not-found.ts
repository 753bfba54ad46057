import { NotFoundException } from '@nestjs/common';

/**
 * The project has no trace with this id (404): over MCP, the agent is told where trace ids come from, and that a
 * trace sent moments ago may not be read yet.
 */
export class TraceNotFound extends NotFoundException {
  constructor(readonly traceId: string) {
    super(`no trace ${traceId}`);
  }
}

/**
 * The page holding a span was asked for, and the trace (the run, with `run`) has no item with that span id (404):
 * over MCP, the agent is told to drop `run` or `span`, or to check the id against where it came from.
 */
export class TimelineItemNotFound extends NotFoundException {
  constructor(
    readonly traceId: string,
    readonly run: string | null,
    readonly spanId: string,
  ) {
    super(`no item ${spanId} in ${run === null ? `trace ${traceId}` : `run ${run} of trace ${traceId}`}`);
  }
}

/**
 * A page of a run was asked for, and the trace has no run with that id (404): an empty page would say the run did
 * nothing. Over MCP, the agent is told to drop `run` or take one of the runs a page lists.
 */
export class TimelineRunNotFound extends NotFoundException {
  constructor(
    readonly traceId: string,
    readonly run: string,
  ) {
    super(`no run ${run} in trace ${traceId}`);
  }
}
