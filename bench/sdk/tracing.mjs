// The one OpenTelemetry setup every instrumented variant shares: a BasicTracerProvider with a BatchSpanProcessor
// (default settings) around an exporter that only counts what it gets, and the AsyncLocalStorage context manager.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const api = require('@opentelemetry/api');
const { BasicTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');

const SUCCESS = { code: 0 }; // ExportResultCode.SUCCESS

/** Bytes of an attribute value as it would leave the process (strings by UTF-16 length: close enough). */
function valueSize(value) {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return value.reduce((sum, item) => sum + valueSize(item), 0);
  return 8;
}

function emptyTally() {
  return { spans: 0, attributes: 0, valueBytes: 0 };
}

/**
 * Counts the spans it is handed and discards them. `isToolSpan` picks the variant's tools/call spans; those are
 * tallied by status (error or not) with their attribute count and value size, everything else is only counted.
 */
export class CountingExporter {
  constructor(isToolSpan) {
    this.isToolSpan = isToolSpan;
    this.reset();
  }

  reset() {
    this.ok = emptyTally();
    this.error = emptyTally();
    this.otherSpans = 0;
    this.attributeKeys = new Set();
    this.sampleSpans = { ok: null, error: null };
  }

  export(spans, done) {
    for (const span of spans) {
      if (!this.isToolSpan(span)) {
        this.otherSpans++;
        continue;
      }
      const failed = span.status.code === api.SpanStatusCode.ERROR;
      const tally = failed ? this.error : this.ok;
      const keys = Object.keys(span.attributes);
      tally.spans++;
      tally.attributes += keys.length;
      for (const key of keys) tally.valueBytes += key.length + valueSize(span.attributes[key]);
      if (this.attributeKeys.size < 64) for (const key of keys) this.attributeKeys.add(key);
      const sample = failed ? 'error' : 'ok';
      this.sampleSpans[sample] ??= {
        name: span.name,
        kind: span.kind,
        status: span.status,
        attributes: span.attributes,
      };
    }
    done(SUCCESS);
  }

  shutdown() {
    return Promise.resolve();
  }

  forceFlush() {
    return Promise.resolve();
  }
}

/** Registers the context manager and a global provider exporting to a CountingExporter. */
export function setUpTracing(isToolSpan) {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  api.context.setGlobalContextManager(contextManager);
  const exporter = new CountingExporter(isToolSpan);
  const processor = new BatchSpanProcessor(exporter);
  const provider = new BasicTracerProvider({ spanProcessors: [processor] });
  api.trace.setGlobalTracerProvider(provider);
  return { api, provider, exporter, processor };
}
