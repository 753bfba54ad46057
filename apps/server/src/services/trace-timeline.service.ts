import { Inject, Injectable } from '@nestjs/common';
import {
  deriveTraceFacts,
  traceTimelinePage,
  type CategorySource,
  type TimelinePageRequest,
  type TraceTimelinePage,
} from '@errata/domain';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { linkedTraceGroups, traceFactsOf } from '../projections/trace-contributions';
import { TraceItemsRepository } from '../repositories/trace-items.repository';
import { TimelineItemNotFound, TimelineRunNotFound, TraceNotFound } from './trace-not-found';

/**
 * A page of one trace's calls, escalations and subagent reports in order, with all its runs, derived as the
 * projection derives them: over the whole trace (and the traces its hints link it to), which the projector reads
 * whole on every batch too. What the page adds is that only its items are made whole and answered, and only their
 * stored arguments read.
 */
@Injectable()
export class TraceTimelineService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly traceItems: TraceItemsRepository,
  ) {}

  async timeline(
    projectId: number,
    traceId: string,
    request: TimelinePageRequest,
  ): Promise<TraceTimelinePage> {
    const loaded = await this.traceItems.loadTrace(projectId, traceId);
    // As the projection derives it: with the traces its hints link it to, not others that share a span id.
    const items = linkedTraceGroups(loaded).find((group) =>
      [...group.calls, ...group.escalations, ...group.reports].some((item) => item.traceId === traceId),
    );
    if (items === undefined) throw new TraceNotFound(traceId);
    const { facts, runs } = traceFactsOf(items);
    const derivation = deriveTraceFacts(facts, { windowMs: this.config.retryWindowMs });
    // This trace's own: a trace its hints link it to may reuse a span id.
    const calls = new Map(
      items.calls.filter((call) => call.traceId === traceId).map((call) => [call.spanId, call]),
    );
    const page = traceTimelinePage(traceId, facts, derivation, [...runs.values()], request, (spanId) => {
      const call = calls.get(spanId);
      return {
        categorySource: (call?.categorySource ?? null) as CategorySource | null,
        evidence: call?.evidence ?? null,
        text: call?.sampleText ?? null,
        arguments: null, // read below, for the page's calls only
      };
    });
    if ('missing' in page) {
      throw page.missing === 'run'
        ? new TimelineRunNotFound(traceId, request.run!)
        : new TimelineItemNotFound(traceId, request.run, page.spanId);
    }
    const pageCalls = page.items.filter((item) => item.kind === 'call').map((item) => item.spanId);
    const storedArguments = await this.traceItems.storedArguments(projectId, traceId, pageCalls);
    return {
      ...page,
      items: page.items.map((item) =>
        item.kind === 'call' ? { ...item, arguments: storedArguments.get(item.spanId) ?? null } : item,
      ),
    };
  }
}
