import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { deriveTraceFacts, traceTimeline, type CategorySource } from '@errata/domain';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { linkedTraceGroups, traceFactsOf } from '../projections/trace-contributions';
import { TraceItemsRepository } from '../repositories/trace-items.repository';

/** One trace's runs, calls, escalations and subagent reports in order, derived as the projection derives them. */
@Injectable()
export class TraceTimelineService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly traceItems: TraceItemsRepository,
  ) {}

  async timeline(projectId: number, traceId: string) {
    const loaded = await this.traceItems.loadTrace(projectId, traceId);
    // As the projection derives it: with the traces its hints link it to, not others that share a span id.
    const items = linkedTraceGroups(loaded).find((group) =>
      [...group.calls, ...group.escalations, ...group.reports].some((item) => item.traceId === traceId),
    );
    if (items === undefined) throw new NotFoundException(`no trace ${traceId}`);
    const { facts, runs } = traceFactsOf(items);
    const derivation = deriveTraceFacts(facts, { windowMs: this.config.retryWindowMs });
    // This trace's own: a trace its hints link it to may reuse a span id.
    const calls = new Map(
      items.calls.filter((call) => call.traceId === traceId).map((call) => [call.spanId, call]),
    );
    const storedArguments = await this.traceItems.storedArguments(projectId, traceId);
    return traceTimeline(traceId, facts, derivation, [...runs.values()], (spanId) => {
      const call = calls.get(spanId);
      return {
        categorySource: (call?.categorySource ?? null) as CategorySource | null,
        evidence: call?.evidence ?? null,
        text: call?.sampleText ?? null,
        arguments: storedArguments.get(spanId) ?? null,
      };
    });
  }
}
