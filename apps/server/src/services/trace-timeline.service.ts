import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { deriveTraceFacts, traceTimeline } from '@errata/domain';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { traceFactsOf } from '../projections/trace-contributions';
import { TraceItemsRepository } from '../repositories/trace-items.repository';

/** One trace's runs, calls, escalations and subagent reports in order, derived as the projection derives them. */
@Injectable()
export class TraceTimelineService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly traceItems: TraceItemsRepository,
  ) {}

  async timeline(projectId: number, traceId: string) {
    const items = await this.traceItems.loadTrace(projectId, traceId);
    if (items.calls.length + items.escalations.length + items.reports.length === 0) {
      throw new NotFoundException(`no trace ${traceId}`);
    }
    const { facts, runs } = traceFactsOf(items);
    const derivation = deriveTraceFacts(facts, { windowMs: this.config.retryWindowMs });
    const texts = new Map(items.calls.map((call) => [call.spanId, call.sampleText]));
    return traceTimeline(
      traceId,
      facts,
      derivation,
      [...runs.values()],
      (spanId) => texts.get(spanId) ?? null,
    );
  }
}
