/**
 * A span processor that sends Errata only what it reads (DOMAIN.md §5): tool calls, agent runs, escalations and
 * subagent reports. A kept span whose in-process parent is filtered out is re-parented to its nearest kept
 * ancestor, so that Errata still sees which agent run a call belongs to. A parent this processor never saw (a
 * span of the host's own provider) or no longer knows (one that ended) gives way to the innermost agent run of
 * the span's context. A span is judged at its start, and once more at its end, since some instrumentations set
 * the attributes that make it a tool call only then; another instrumentation's span inside a tool call Errata
 * records itself is never sent. Memory is bounded: at most `maxQueueSize` spans wait for export, later ones are
 * dropped and counted. One export at a time is awaited (one that times out is counted as failed and abandoned to
 * the exporter's own timeout); at shutdown a few go out at once.
 */
import { context, diag, trace, type Context, type SpanContext } from '@opentelemetry/api';
import {
  ExportResultCode,
  suppressTracing,
  type ExportResult,
  type InstrumentationScope,
} from '@opentelemetry/core';
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  ESCALATION_SPAN,
  isAgentSpan,
  SUBAGENT_REPORT_SPAN,
  toolCallSource,
  type Attributes as DomainAttributes,
  type SpanRecord,
} from '@errata/domain';
import { agentRunSpanContext, endOpenRuns } from './agent';
import { optionValue, POSITIVE_INTEGER } from './option-value';
import { safeDiag } from './safe-diag';

export interface ErrataSpanProcessorOptions {
  readonly exporter: SpanExporter;
  /** Spans waiting for export at most; more are dropped (counted in `stats().dropped`). Default 2048. */
  readonly maxQueueSize?: number | undefined;
  /** Spans per export request. Default 512. */
  readonly maxExportBatchSize?: number | undefined;
  /** How long a span may wait for a batch to fill. Default 1000 ms. */
  readonly scheduledDelayMillis?: number | undefined;
  /** An export that has not answered by then counts as failed; also what shutdown takes at most. Default 30000 ms. */
  readonly exportTimeoutMillis?: number | undefined;
  /** Send every span, not only Errata's (for a pipeline that exports to Errata alone). Default false. */
  readonly exportAllSpans?: boolean | undefined;
}

export interface ErrataExportStats {
  /** Spans waiting for export now. */
  readonly queued: number;
  /** Spans in an export Errata has not answered yet. */
  readonly exporting: number;
  /** Spans the exporter confirmed. */
  readonly exported: number;
  /** Spans dropped because the queue was full or the processor was shut down. */
  readonly dropped: number;
  /** Spans whose export failed or timed out (after the exporter's own retries). */
  readonly failed: number;
  /** Spans not sent because Errata does not read them. */
  readonly filtered: number;
}

/** `exportTimeoutMillis` when neither the option nor an OTLP timeout variable gives one. */
export const DEFAULT_EXPORT_TIMEOUT_MILLIS = 30_000;

/** At shutdown, batches exported at once: within the OTLP exporter's limit of concurrent exports (30). */
const SHUTDOWN_PARALLEL_EXPORTS = 4;

/** Waits for what `work` returns (a promise or not) until `deadline` (epoch ms) at most; failures go to diag. */
async function settledBefore(what: string, work: () => unknown, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
    timer.unref();
  });
  const settled = new Promise((resolve) => resolve(work())).then(
    () => undefined,
    (error: unknown) => safeDiag(() => diag.error(`@errata/sdk: ${what} failed`, error)),
  );
  await Promise.race([settled, late]);
  clearTimeout(timer);
}

/** Live spans tracked for re-parenting at most, per map; beyond it the oldest are forgotten. */
const MAX_TRACKED_SPANS = 65_536;

/** OTel API SpanKind (INTERNAL = 0) → OTLP numbering (INTERNAL = 1), which the domain uses. */
const otlpKind = (apiKind: number): number => apiKind + 1;

type JudgedSpan = Pick<ReadableSpan, 'name' | 'kind' | 'attributes'>;

/**
 * How Errata reads a span, by the domain's own rules: a tool call of Errata's instrumentation (`own-call`), one
 * of another instrumentation (`other-call`), another span it stores (`kept`), or none (null).
 */
function readingOf(span: JudgedSpan): 'own-call' | 'other-call' | 'kept' | null {
  if (span.name === ESCALATION_SPAN || span.name === SUBAGENT_REPORT_SPAN) return 'kept';
  const record = {
    name: span.name,
    kind: otlpKind(span.kind),
    attributes: span.attributes as DomainAttributes,
  } as SpanRecord;
  if (isAgentSpan(record)) return 'kept';
  const source = toolCallSource(record);
  return source === null ? null : source === 'errata' ? 'own-call' : 'other-call';
}

/** Whether Errata reads this span, judged by the domain's own rules on what the span looks like now. */
export function isErrataSpan(span: JudgedSpan): boolean {
  return readingOf(span) !== null;
}

/** A span of an OpenTelemetry JS SDK 1.x provider: the 2.x names below did not exist yet. */
interface Sdk1Span {
  readonly instrumentationLibrary?: InstrumentationScope;
  readonly parentSpanId?: string;
}

/**
 * A span in the shape the exporter (OpenTelemetry JS 2.x) reads. A host that keeps its own 1.x provider and adds
 * Errata's processor to it hands over spans with `instrumentationLibrary` and `parentSpanId` instead of
 * `instrumentationScope` and `parentSpanContext`: exported as they are, every batch failed.
 */
function inExporterShape(span: ReadableSpan): ReadableSpan {
  if (span.instrumentationScope !== undefined) return span;
  const { instrumentationLibrary, parentSpanId } = span as unknown as Sdk1Span;
  const { traceId, traceFlags } = span.spanContext();
  return withParent(
    span,
    span.parentSpanContext ?? (parentSpanId ? { traceId, spanId: parentSpanId, traceFlags } : undefined),
    instrumentationLibrary ?? { name: 'unknown' },
  );
}

function withParent(
  span: ReadableSpan,
  parent: SpanContext | undefined,
  instrumentationScope: InstrumentationScope = span.instrumentationScope,
): ReadableSpan {
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanContext: parent,
    startTime: span.startTime,
    endTime: span.endTime,
    status: span.status,
    attributes: span.attributes,
    links: span.links,
    events: span.events,
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}

export class ErrataSpanProcessor implements SpanProcessor {
  private readonly exporter: SpanExporter;
  private readonly maxQueueSize: number;
  private readonly batchSize: number;
  private readonly delayMs: number;
  private readonly timeoutMs: number;
  private readonly exportAll: boolean;

  /** Filtered-out live spans → their nearest kept ancestor (undefined: none, the kept span becomes a root). */
  private readonly filteredAncestors = new Map<string, SpanContext | undefined>();
  /** Kept live spans → whether it is a tool call of Errata's own instrumentation. A local parent in neither map is
   * a span this processor does not know. */
  private readonly keptSpans = new Map<string, boolean>();
  /** Live spans of other instrumentations inside one of Errata's own tool calls: never sent, whatever they become. */
  private readonly duplicates = new Map<string, boolean>();
  /** Kept live spans whose parent was filtered out → the parent to export instead. */
  private readonly newParents = new Map<string, SpanContext | undefined>();

  private queue: ReadableSpan[] = [];
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private loopScheduled = false;
  private stopped = false;
  private stopping: Promise<void> | undefined;
  private exporting = 0;
  private counts = { exported: 0, dropped: 0, failed: 0, filtered: 0 };
  /** Spans failed since the last export that succeeded. */
  private failedInARow = 0;

  constructor(options: ErrataSpanProcessorOptions) {
    this.exporter = options.exporter;
    const count = (name: string, given: unknown, fallback: number): number =>
      optionValue(name, given, POSITIVE_INTEGER, () => fallback);
    this.maxQueueSize = count('maxQueueSize', options.maxQueueSize, 2048);
    this.batchSize = Math.min(
      count('maxExportBatchSize', options.maxExportBatchSize, 512),
      this.maxQueueSize,
    );
    this.delayMs = count('scheduledDelayMillis', options.scheduledDelayMillis, 1000);
    this.timeoutMs = count('exportTimeoutMillis', options.exportTimeoutMillis, DEFAULT_EXPORT_TIMEOUT_MILLIS);
    this.exportAll = options.exportAllSpans === true;
  }

  stats(): ErrataExportStats {
    return { queued: this.queue.length, exporting: this.exporting, ...this.counts };
  }

  onStart(span: Span, parentContext: Context): void {
    if (this.exportAll) return;
    const spanId = span.spanContext().spanId;
    const parent = trace.getSpanContext(parentContext);
    const keptAncestor = this.keptAncestorOf(parent, parentContext);
    const reading = readingOf(span);
    // Another instrumentation's span for a call Errata's own instrumentation records (Traceloop's `{tool}.tool`
    // starts inside it) would count that call twice.
    const duplicate =
      (reading === null || reading === 'other-call') &&
      (this.insideOwnCall(parentContext) || this.insideOwnCall(context.active()));
    if (reading !== null && !duplicate) {
      this.track(this.keptSpans, spanId, reading === 'own-call');
      if (keptAncestor?.spanId !== parent?.spanId) this.track(this.newParents, spanId, keptAncestor);
    } else {
      this.track(this.filteredAncestors, spanId, keptAncestor);
      if (duplicate) this.track(this.duplicates, spanId, true);
    }
  }

  onEnd(ended: ReadableSpan): void {
    const span = inExporterShape(ended);
    const spanId = span.spanContext().spanId;
    if (!this.exportAll) {
      this.keptSpans.delete(spanId);
      if (this.filteredAncestors.has(spanId)) {
        const keptAncestor = this.filteredAncestors.get(spanId);
        this.filteredAncestors.delete(spanId);
        const duplicate = this.duplicates.delete(spanId);
        if (!duplicate && isErrataSpan(span)) {
          this.enqueue(withParent(span, keptAncestor));
        } else {
          this.counts.filtered++;
        }
        return;
      }
      if (this.newParents.has(spanId)) {
        const parent = this.newParents.get(spanId);
        this.newParents.delete(spanId);
        this.enqueue(withParent(span, parent));
        return;
      }
      // A span started before this processor existed: judge it now.
      if (!isErrataSpan(span)) {
        this.counts.filtered++;
        return;
      }
    }
    this.enqueue(span);
  }

  /**
   * Exports the spans queued now (not those that end meanwhile, which wait for a full batch or the timer). It stops
   * at the first failed batch: Errata is down or refuses the key, and the next batches would only wait as long. It
   * returns within `exportTimeoutMillis`, also behind an export already in flight; what it could not send by then
   * stays queued for the next turn.
   */
  forceFlush(): Promise<void> {
    if (this.stopping !== undefined) return this.stopping;
    this.clearTimer();
    const deadline = Date.now() + this.timeoutMs;
    // What the flush could not send goes out on the timer, as spans that end later would.
    return settledBefore('a flush', () => this.schedule(true, deadline), deadline).then(() =>
      this.armTimer(),
    );
  }

  /**
   * Sends what is queued and stops, within `exportTimeoutMillis` even when Errata does not answer: the remaining
   * batches go out a few at a time, spans still queued at the deadline are dropped (counted), and the exporter's
   * own shutdown (which waits for requests still open) is not awaited past it.
   */
  shutdown(): Promise<void> {
    this.stopping ??= this.stop();
    return this.stopping;
  }

  private async stop(): Promise<void> {
    const ended = endOpenRuns();
    if (ended > 0) {
      safeDiag(() =>
        diag.warn(
          `@errata/sdk: ${ended} agent run(s) still open at shutdown were ended, so that they are sent`,
        ),
      );
    }
    this.stopped = true;
    this.clearTimer();
    const deadline = Date.now() + this.timeoutMs;
    const drain = async () => {
      while (this.queue.length > 0 && Date.now() < deadline)
        if ((await this.exportBatch(deadline)).spans === 0) break;
    };
    const drains = Array.from({ length: SHUTDOWN_PARALLEL_EXPORTS }, drain);
    await Promise.all([this.chain, ...drains]);
    // What the deadline left unsent.
    this.counts.dropped += this.queue.splice(0).length;
    await settledBefore("the exporter's shutdown", () => this.exporter.shutdown(), deadline);
  }

  /**
   * The first failed export of a run of failures is an error (a refused key, Errata down), the rest only debug
   * messages: one a second for as long as it lasts would bury the host's own log. Recovery is said once.
   */
  private logOutcome(spans: number, ok: boolean, reason: unknown): void {
    if (ok) {
      if (this.failedInARow > 0) {
        const failed = this.failedInARow;
        safeDiag(() => diag.info(`@errata/sdk: exports succeed again, after ${failed} spans failed`));
      }
      this.failedInARow = 0;
      return;
    }
    const first = this.failedInARow === 0;
    this.failedInARow += spans;
    safeDiag(() =>
      first
        ? diag.error(
            `@errata/sdk: export of ${spans} spans failed; further failures are logged at debug level until an export succeeds`,
            reason,
          )
        : diag.debug(`@errata/sdk: export of ${spans} spans failed`, reason),
    );
  }

  /** The span to name as parent in Errata's place of `parent`: itself when Errata receives it. */
  private keptAncestorOf(parent: SpanContext | undefined, parentContext: Context): SpanContext | undefined {
    if (parent === undefined || parent.isRemote || this.keptSpans.has(parent.spanId)) return parent;
    if (this.filteredAncestors.has(parent.spanId)) return this.filteredAncestors.get(parent.spanId);
    // A span this processor never saw or no longer knows: the context's agent run, if in the same trace.
    const run = agentRunSpanContext(parentContext);
    return run !== undefined && run.traceId === parent.traceId ? run : parent;
  }

  private insideOwnCall(spanContext: Context): boolean {
    const active = trace.getSpanContext(spanContext);
    return active !== undefined && this.keptSpans.get(active.spanId) === true;
  }

  private track<V>(map: Map<string, V>, spanId: string, value: V): void {
    if (map.size >= MAX_TRACKED_SPANS) {
      const oldest = map.keys().next();
      if (!oldest.done) map.delete(oldest.value);
    }
    map.set(spanId, value);
  }

  private enqueue(span: ReadableSpan): void {
    if (this.stopped || this.queue.length >= this.maxQueueSize) {
      if (this.counts.dropped++ === 0)
        safeDiag(() => diag.warn('@errata/sdk: export queue full or shut down; dropping spans'));
      return;
    }
    this.queue.push(span);
    if (this.queue.length >= this.batchSize) void this.schedule(false);
    else this.armTimer();
  }

  /** Sends what is queued after `scheduledDelayMillis`, unless a timer is set already or nothing waits. */
  private armTimer(): void {
    if (this.timer !== undefined || this.stopped || this.queue.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.schedule(true);
    }, this.delayMs);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Exports after whatever export is in flight: full batches, and with `all` also the spans queued now (a steady
   * stream of new spans would otherwise keep it exporting batches of a few). A failed batch ends the turn; the
   * next full batch or the timer tries again.
   */
  private schedule(all: boolean, deadline = Infinity): Promise<void> {
    if (!all && this.loopScheduled) return this.chain;
    this.loopScheduled = true;
    let owed = all ? this.queue.length : 0;
    this.chain = this.chain.then(async () => {
      this.loopScheduled = false;
      // After shutdown the remaining batches are shutdown's to send.
      while (
        !this.stopped &&
        Date.now() < deadline &&
        this.queue.length > 0 &&
        (owed > 0 || this.queue.length >= this.batchSize)
      ) {
        const { spans, ok } = await this.exportBatch(deadline);
        // An empty batch would be sent again and again: none can be, but the loop must never spin on one.
        if (!ok || spans === 0) break;
        owed -= spans;
      }
    });
    return this.chain;
  }

  /**
   * Exports the next batch; it counts as failed if the exporter has not answered within the timeout or by
   * `deadline`.
   */
  private exportBatch(deadline = Infinity): Promise<{ spans: number; ok: boolean }> {
    const batch = this.queue.splice(0, this.batchSize);
    const timeoutMs = Math.max(0, Math.min(this.timeoutMs, deadline - Date.now()));
    this.exporting += batch.length;
    return new Promise((resolve) => {
      let settled = false;
      const settle = (ok: boolean, reason?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timeout);
        this.exporting -= batch.length;
        this.counts[ok ? 'exported' : 'failed'] += batch.length;
        // Before logging: a host diag logger that throws must not leave the export unsettled.
        resolve({ spans: batch.length, ok });
        this.logOutcome(batch.length, ok, reason);
      };
      const timeout = setTimeout(() => settle(false, new Error('export timed out')), timeoutMs);
      timeout.unref();
      const send = () => {
        // Timed out while the resources settled: counted as failed already, so not sent late.
        if (settled) return;
        try {
          context.with(suppressTracing(context.active()), () =>
            this.exporter.export(batch, (result: ExportResult) =>
              settle(result.code === ExportResultCode.SUCCESS, result.error),
            ),
          );
        } catch (error) {
          settle(false, error);
        }
      };
      const settling = resourcesSettling(batch);
      if (settling === null) send();
      else settling.then(send, (error: unknown) => settle(false, error));
    });
  }
}

/**
 * The resources of `spans` whose asynchronous attributes (a host NodeSDK's resource detectors) are still coming, as
 * one promise; null when none are. The exporter reads a resource's attributes as it serializes: before they are in,
 * it would send them without, and OpenTelemetry logs an error.
 */
function resourcesSettling(spans: readonly ReadableSpan[]): Promise<unknown> | null {
  let pending: Set<ReadableSpan['resource']> | null = null;
  for (const { resource } of spans) {
    if (resource.asyncAttributesPending === true && resource.waitForAsyncAttributes !== undefined) {
      (pending ??= new Set()).add(resource);
    }
  }
  return pending === null
    ? null
    : Promise.all([...pending].map((resource) => resource.waitForAsyncAttributes?.()));
}
