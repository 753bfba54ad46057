import { Inject, Injectable } from '@nestjs/common';
import { normalizeSpan, type ErrataEvent, type SpanRecord } from '@errata/domain';
import { decodeTraceRequest, type OtlpEncoding, type RejectedSpan } from '@errata/otlp';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { unixMicros } from '../database/timestamps';
import { EventRepository, type NewEvent, type NewSpanEdge } from '../repositories/event.repository';
import { IngestActivity } from './ingest-activity';
import { ProjectorService } from './projector.service';

export interface IngestResult {
  readonly received: number;
  readonly appended: number;
  readonly dropped: number;
  readonly rejected: readonly RejectedSpan[];
}

/** Too many requests in flight: the caller answers 503 with Retry-After and the exporter retries. */
export class IngestOverloadedError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('Errata is at its ingest concurrency limit; retry later');
  }
}

@Injectable()
export class IngestService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly events: EventRepository,
    private readonly projector: ProjectorService,
    private readonly activity: IngestActivity,
  ) {}

  /**
   * Decodes, normalizes and appends one OTLP request in one write. Resolves only after the commit, so a
   * 200 means every accepted span is durable. Throws OtlpDecodeError for an undecodable body.
   */
  async ingest(projectId: number, body: Uint8Array, encoding: OtlpEncoding): Promise<IngestResult> {
    if (this.activity.requestsInFlight >= this.config.maxConcurrentIngests)
      throw new IngestOverloadedError(1);
    this.activity.begin();
    try {
      const decoded = decodeTraceRequest(body, encoding, {
        maxAttributeValueBytes: this.config.maxAttributeBytes,
      });
      const events: NewEvent[] = [];
      const edges: NewSpanEdge[] = [];
      for (const span of decoded.spans) {
        const event = normalizeSpan(span, { textLimitBytes: this.config.textLimitBytes });
        if (event) events.push(toNewEvent(span, event));
        else if (span.parentSpanId) edges.push(toEdge(span, span.parentSpanId));
      }
      const received = decoded.spans.length + decoded.rejected.length;
      const dropped = decoded.spans.length - events.length;
      let appended = 0;
      if (decoded.spans.length > 0) {
        ({ appended } = await this.events.append(projectId, events, edges, {
          received,
          dropped,
          rejected: decoded.rejected.length,
        }));
        if (appended > 0) this.projector.wake();
      }
      return { received, appended, dropped, rejected: decoded.rejected };
    } finally {
      this.activity.end();
    }
  }
}

function toNewEvent(span: SpanRecord, event: ErrataEvent): NewEvent {
  const toolCall = event.type === 'ToolCallObserved' ? event.data : null;
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    startMicros: unixMicros(span.startTimeUnixNano),
    endMicros: unixMicros(span.endTimeUnixNano),
    type: event.type,
    serverName: toolCall?.server.name ?? null,
    toolName: toolCall?.tool ?? null,
    outcome: toolCall?.outcome ?? null,
    data: event.data,
  };
}

function toEdge(span: SpanRecord, parentSpanId: string): NewSpanEdge {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    startMicros: unixMicros(span.startTimeUnixNano),
    parentSpanId,
  };
}
