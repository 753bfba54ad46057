import type { FixEvent } from '@errata/domain';

/** The webhook an event sends the owners, if it sends one. */
export function webhookTypeOf(event: FixEvent): string | null {
  const types = {
    FixSuggested: 'errata.fix.suggested',
    FixVerified: 'errata.fix.verified',
    FixRegressed: 'errata.fix.regressed',
    FixDelivered: null,
    FixAcknowledged: null,
  } as const;
  return types[event.type];
}

/**
 * One message per owner and piece of news: a round that decides it again enqueues nothing new, and a delivered message
 * is told by it which news it carried.
 */
export function dedupeKeyOf(findingId: string, event: FixEvent): string {
  const version = 'version' in event.data ? event.data.version : '';
  return `${webhookTypeOf(event)}:${findingId}:${version}`;
}
