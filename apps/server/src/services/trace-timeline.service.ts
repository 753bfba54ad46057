import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { deriveTraceFacts, traceTimeline } from '@errata/domain';
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
    const texts = new Map(items.calls.map((call) => [call.spanId, call.sampleText]));
    const storedArguments = await this.traceItems.storedArguments(projectId, traceId);
    return traceTimeline(traceId, facts, derivation, [...runs.values()], (spanId) => ({
      text: texts.get(spanId) ?? null,
      arguments: storedArguments.get(spanId) ?? null,
    }));
  }
}
