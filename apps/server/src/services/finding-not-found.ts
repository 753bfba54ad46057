import { NotFoundException } from '@nestjs/common';

/**
 * The project has no finding with this id in the window and filters asked for (404): over MCP, the agent is told to
 * list the findings with the same filters, or to widen the window.
 */
export class FindingNotFound extends NotFoundException {
  constructor(readonly findingId: string) {
    super(`no finding ${findingId}`);
  }
}

/**
 * Errata has suggested no fix for this finding (404): it suggests one only to an owner registered for the finding's
 * server, so over MCP the agent is told to have one registered rather than to retry.
 */
export class FixNotFound extends NotFoundException {
  constructor(readonly findingId: string) {
    super(`no fix for finding ${findingId}`);
  }
}
