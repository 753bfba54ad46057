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

/** Too many requests, or bytes, in flight: the caller answers 503 with Retry-After and the exporter retries. */
export class IngestOverloadedError extends Error {
  constructor(
    readonly retryAfterSeconds: number,
    message = 'Errata is at its ingest concurrency limit; retry later',
  ) {
    super(message);
  }
}

/** The project a request stores its spans in, and whether it keeps its calls' raw arguments (DOMAIN.md §6). */
export interface IngestingProject {
  readonly id: number;
  readonly storeArguments: boolean;
}

@Injectable()
export class IngestService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly events: EventRepository,
    private readonly projector: ProjectorService,
    private readonly activity: IngestActivity,
  ) {}

  /** Requests holding one of the `ERRATA_MAX_CONCURRENT_INGESTS` places: their bodies arriving, or being stored. */
  private admitted = 0;

  get requestsAdmitted(): number {
    return this.admitted;
  }

  /** Inflated body bytes of the requests being decoded and stored (`ERRATA_MAX_DECODING_BYTES`). */
  private decoding = 0;

  /** Every place is taken: a request now is refused with 503 + Retry-After. */
  get full(): boolean {
    return this.admitted >= this.config.maxConcurrentIngests;
  }

  /**
   * Reads, decodes, normalizes and appends one OTLP request in one write. Resolves only after the commit, so a
   * 200 means every accepted span is durable. Throws OtlpDecodeError for an undecodable body.
   *
   * The request takes its place among `ERRATA_MAX_CONCURRENT_INGESTS` before `readBody` runs: a body is held in
   * memory inflated (up to `ERRATA_MAX_BODY_BYTES`), so only the limit bounds that memory when it covers the
   * reading too; a request over it is refused without its body being read. The place is given back however the
   * request ends (stored, undecodable, too large, its client gone, or its body too slow: ERRATA_BODY_TIMEOUT_MS).
   */
  async ingest(
    project: IngestingProject,
    readBody: () => Promise<Uint8Array>,
    encoding: OtlpEncoding,
  ): Promise<IngestResult> {
    if (this.full) throw new IngestOverloadedError(1);
    this.admitted++;
    try {
      const body = await readBody();
      // Decoded, a body takes about 12 times its size until it is stored: a body that would take the bytes being
      // decoded past the limit waits for its exporter's retry, unless nothing else is being decoded.
      if (this.decoding > 0 && this.decoding + body.length > this.config.maxDecodingBytes) {
        throw new IngestOverloadedError(
          1,
          'Errata is decoding as many bytes as it may at once (ERRATA_MAX_DECODING_BYTES); retry later',
        );
      }
      this.decoding += body.length;
      // From here on the request uses the CPU, which the projector's background batches give way to; a body still
      // on its way does not (a stalled upload made every batch wait ERRATA_PROJECTION_YIELD_MS).
      this.activity.begin();
      try {
        return await this.store(project, body, encoding);
      } finally {
        this.activity.end();
        this.decoding -= body.length;
      }
    } finally {
      this.admitted--;
    }
  }

  private async store(
    project: IngestingProject,
    body: Uint8Array,
    encoding: OtlpEncoding,
  ): Promise<IngestResult> {
    const decoded = decodeTraceRequest(body, encoding, {
      maxAttributeValueBytes: this.config.maxAttributeBytes,
    });
    const events: NewEvent[] = [];
    const edges: NewSpanEdge[] = [];
    const rejected = [...decoded.rejected];
    for (const span of decoded.spans) {
      const event = this.normalized(span, rejected, project.storeArguments);
      if (event === undefined) continue;
      if (event) events.push(toNewEvent(span, event));
      else if (span.parentSpanId) edges.push(toEdge(span, span.parentSpanId));
    }
    const received = decoded.spans.length + decoded.rejected.length;
    const dropped = received - rejected.length - events.length;
    let appended = 0;
    // A request whose every span was rejected is counted too; an empty one (nothing received) writes nothing.
    if (received > 0) {
      ({ appended } = await this.events.append(project.id, events, edges, {
        received,
        dropped,
        rejected: rejected.length,
      }));
      if (appended > 0) this.projector.wake();
    }
    return { received, appended, dropped, rejected };
  }

  /**
   * The span's event (null: not one Errata stores); undefined when reading it failed, recorded in `rejected`. A
   * span the domain cannot read costs that span, not the request: the other spans are stored.
   */
  private normalized(
    span: SpanRecord,
    rejected: RejectedSpan[],
    storeArguments: boolean,
  ): ErrataEvent | null | undefined {
    try {
      return normalizeSpan(span, { textLimitBytes: this.config.textLimitBytes, storeArguments });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      rejected.push({
        traceId: span.traceId,
        spanId: span.spanId,
        reason: `the span could not be read: ${reason}`,
      });
      return undefined;
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
