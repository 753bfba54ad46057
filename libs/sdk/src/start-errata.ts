/**
 * Export in one call. `startErrata` sets up an OpenTelemetry Node tracer provider whose only processor sends
 * Errata's spans with the OTLP/HTTP protobuf exporter and enables the MCP client instrumentation. Without a host
 * provider, Errata's provider also serves the OpenTelemetry API's tracers, without taking the API's global slot:
 * a host SDK started later still registers. Hosts that keep their own provider add `createErrataSpanProcessor(...)`
 * to its span processors instead.
 */
import { diag, type TracerProvider } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import type { Sampler, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ExportResultCode } from '@opentelemetry/core';
import {
  DEFAULT_EXPORT_TIMEOUT_MILLIS,
  ErrataSpanProcessor,
  type ErrataExportStats,
  type ErrataSpanProcessorOptions,
} from './errata-span-processor';
import { BOOLEAN, environmentValue, optionValue, POSITIVE_INTEGER, shown } from './option-value';
import { safeDiag } from './safe-diag';
import { McpClientInstrumentation } from './mcp-client.instrumentation';
import { checkedCaptureConfig, setRunningCaptureConfig } from './capture-config';
import { ensureContextManager, serveApiTracers } from './api-globals';
import { setErrataDisabled, setErrataTracerProvider } from './tracer';
import type { ToolCallCaptureConfig } from './types';
import { RecordEverythingSampler } from './errata-sampler';
import { endOpenRuns } from './agent';

export interface ErrataExportOptions extends Omit<ErrataSpanProcessorOptions, 'exporter'> {
  /**
   * Errata's base URL, e.g. `http://localhost:4318`; `/v1/traces` is appended. Default: the standard
   * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `OTEL_EXPORTER_OTLP_ENDPOINT`, else `http://localhost:4318`.
   */
  readonly endpoint?: string | undefined;
  /**
   * A project ingest key, sent as `Authorization: Bearer …`. Default: `ERRATA_API_KEY` (startErrata), else the
   * `Authorization` header of `OTEL_EXPORTER_OTLP_HEADERS`.
   */
  readonly apiKey?: string | undefined;
  /** Another exporter instead of OTLP/HTTP protobuf (a collector client, or an in-memory one in tests). */
  readonly exporter?: SpanExporter | undefined;
}

/**
 * `captureResults` / `captureArguments` not given: `ERRATA_CAPTURE_RESULTS` / `ERRATA_CAPTURE_ARGUMENTS` = `true`
 * opts in. `instrumentMcpClient` without a config of its own and the agent API follow these settings.
 */
export interface ErrataOptions extends ErrataExportOptions, ToolCallCaptureConfig {
  /** `service.name` of the agent runtime. Default: `OTEL_SERVICE_NAME`, else OpenTelemetry's default. */
  readonly serviceName?: string | undefined;
  /**
   * Your sampling, when you set it in code (the sampler you give your own provider): it decides whether Errata's root
   * spans are *sampled*, the flag their trace context carries to your spans and to MCP servers. Errata records and
   * exports every span all the same. Default: what `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG` configure.
   */
  readonly sampler?: Sampler | undefined;
  /** Patch `@modelcontextprotocol/sdk` as it loads. Default true; bundled code uses `instrumentMcpClient`. */
  readonly instrumentMcpSdk?: boolean | undefined;
  /** Flush once when the event loop empties (`beforeExit`). Default true. Call `shutdown()` on SIGTERM. */
  readonly flushOnExit?: boolean | undefined;
}

export interface ErrataHandle {
  readonly tracerProvider: TracerProvider;
  readonly processor: ErrataSpanProcessor;
  readonly instrumentation: McpClientInstrumentation | null;
  /**
   * Whether Errata's provider served the OpenTelemetry API's tracers when it started (false when the host already
   * had a provider; a host provider registered later takes over).
   */
  readonly servesApiTracers: boolean;
  stats(): ErrataExportStats;
  forceFlush(): Promise<void>;
  /** Flushes what is queued, then stops exporting and unpatches the MCP SDK; calling it again returns the same promise. */
  shutdown(): Promise<void>;
}

/**
 * One timeout for the processor and the exporter, so that an answer the exporter still waits for is never one the
 * processor counted as failed, and a `Retry-After` within it is waited for: the option, else the OTLP timeout
 * variables the exporter itself would read, else 30 s (the exporter's own default is 10 s).
 */
export function exportTimeoutMillis(options: Pick<ErrataExportOptions, 'exportTimeoutMillis'>): number {
  return optionValue('exportTimeoutMillis', options.exportTimeoutMillis, POSITIVE_INTEGER, () =>
    environmentValue('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', POSITIVE_INTEGER, () =>
      environmentValue('OTEL_EXPORTER_OTLP_TIMEOUT', POSITIVE_INTEGER, () => DEFAULT_EXPORT_TIMEOUT_MILLIS),
    ),
  );
}

const DISABLED = new Error('OTEL_SDK_DISABLED=true');

/** An exporter that sends nothing and says why, for an endpoint that cannot be sent to. */
const refusingExporter = (why: Error): SpanExporter => ({
  export: (_spans, done) => done({ code: ExportResultCode.FAILED, error: why }),
  shutdown: () => Promise.resolve(),
});

/**
 * `<endpoint>/v1/traces`, or null (said to diag) when that is no http(s) URL: a host must not crash on a typo. A URL
 * object is read as its text; an endpoint given with `/v1/traces` already keeps it once.
 */
function tracesUrl(given: unknown): string | null {
  const endpoint = String(given)
    .replace(/\/+$/, '')
    .replace(/\/v1\/traces$/, '');
  const url = `${endpoint}/v1/traces`;
  const isHttp = (text: string): boolean => {
    try {
      return ['http:', 'https:'].includes(new URL(text).protocol);
    } catch {
      return false;
    }
  };
  if (isHttp(url)) return url;
  const guess = `http://${endpoint}`;
  const hint = isHttp(`${guess}/v1/traces`) ? ` (did you mean "${guess}"?)` : '';
  safeDiag(() =>
    diag.error(
      `@errata/sdk: endpoint "${endpoint}" is not an http(s) URL${hint}; Errata's spans are not sent`,
    ),
  );
  return null;
}

/**
 * The key as sent: without the spaces or line ends around it that a key pasted or read from a file brings (a `\r`
 * would make every export fail); an empty one is none. The option and `ERRATA_API_KEY` alike, and
 * `createErrataSpanProcessor`'s.
 */
const ingestKey = (given: unknown): string | undefined =>
  given === undefined || given === null ? undefined : String(given).trim() || undefined;

function exporterFor(options: ErrataExportOptions, timeoutMillis: number): SpanExporter {
  if (options.exporter !== undefined) return options.exporter;
  const url = options.endpoint === undefined ? undefined : tracesUrl(options.endpoint);
  if (url === null)
    return refusingExporter(new Error(`endpoint "${String(options.endpoint)}" is not an http(s) URL`));
  const apiKey = ingestKey(options.apiKey);
  const headers = apiKey === undefined ? undefined : { Authorization: `Bearer ${apiKey}` };
  return new OTLPTraceExporter({ url, headers, timeoutMillis });
}

/** A span processor for a host that keeps its own tracer provider: add it to the provider's span processors. */
export function createErrataSpanProcessor(options: ErrataExportOptions = {}): ErrataSpanProcessor {
  const timeoutMillis = exportTimeoutMillis(options);
  return new ErrataSpanProcessor({
    ...options,
    exportTimeoutMillis: timeoutMillis,
    exporter: exporterFor(options, timeoutMillis),
  });
}

/** A boolean environment variable, as OpenTelemetry reads one: `true` or `false` in any case, unset is false. */
const flag = (name: string): boolean => environmentValue(name, BOOLEAN, () => false);

/**
 * The options, with what the environment says where they are silent (`ERRATA_ENDPOINT`, `ERRATA_API_KEY`, …); a
 * wrong value, given or in the environment, is replaced by the next source's, and a `diag` warning says so.
 */
function withEnvironment(options: ErrataOptions): ErrataOptions {
  return {
    ...checkedCaptureConfig(options, (option) =>
      flag(option === 'captureResults' ? 'ERRATA_CAPTURE_RESULTS' : 'ERRATA_CAPTURE_ARGUMENTS'),
    ),
    // Errata's own variable first: a host that exports elsewhere through OTEL_EXPORTER_OTLP_* keeps them.
    endpoint: options.endpoint ?? (process.env['ERRATA_ENDPOINT']?.trim() || undefined),
    apiKey: options.apiKey ?? process.env['ERRATA_API_KEY'], // trimmed where the header is made
  };
}

/**
 * OpenTelemetry's kill switch (`OTEL_SDK_DISABLED=true`): nothing is instrumented, registered or sent, and the agent
 * API does not warn that its runs are lost for want of a provider: the host chose it.
 */
function disabledHandle(processor: ErrataSpanProcessor): ErrataHandle {
  safeDiag(() => diag.info('@errata/sdk: OTEL_SDK_DISABLED=true; Errata records nothing'));
  setErrataDisabled(true);
  return {
    tracerProvider: new NodeTracerProvider(),
    processor,
    instrumentation: null,
    servesApiTracers: false,
    stats: () => processor.stats(),
    forceFlush: () => processor.forceFlush(),
    shutdown: () => {
      setErrataDisabled(false);
      return processor.shutdown();
    },
  };
}

/**
 * The instrumentation of every startErrata in the process, re-pointed at each one's provider: OpenTelemetry's
 * module hooks outlive `disable()`, and each instrumentation's would keep it, with the provider and processor it
 * served, alive (4.9 KB of heap per start and shutdown; 0.4 KB with one instance).
 */
let processInstrumentation: McpClientInstrumentation | undefined;

/** The handle of the running startErrata, so that a second call does not set up a second pipeline. */
let running: ErrataHandle | undefined;

/** Attributes a span of Errata's own provider keeps: OpenTelemetry's default, far above the ~30 a tool call has. */
const ERRATA_SPAN_ATTRIBUTE_COUNT_LIMIT = 128;

/**
 * The options given: none for undefined or null; anything else that is no object (plain JavaScript:
 * `startErrata('http://…')`) is said to diag, and the defaults and the environment hold.
 */
function optionsObject(given: unknown): ErrataOptions {
  if (given === undefined || given === null) return {};
  if (typeof given === 'object') return given as ErrataOptions;
  const url = typeof given === 'string' && /^(https?:\/\/|[\w.-]+:\d+(\/|$))/i.test(given.trim());
  const hint = url ? ` (for an endpoint: startErrata({ endpoint: ${JSON.stringify(given.trim())} }))` : '';
  safeDiag(() =>
    diag.warn(
      `@errata/sdk: startErrata takes an options object; got ${typeof given} ${shown(given)}${hint}; ` +
        'the defaults and the environment are used',
    ),
  );
  return {};
}

/** Starts Errata's export (once per process: a second call returns the running handle and warns). */
export function startErrata(passed: ErrataOptions = {}): ErrataHandle {
  const given = optionsObject(passed);
  if (running !== undefined) {
    const message =
      '@errata/sdk: startErrata was called again; the running export is kept, the new options ignored';
    safeDiag(() => diag.warn(message));
    // Options lost this way (the quick start's startErrata under `--import @errata/sdk/register`) send the spans
    // elsewhere than the code says: a Node warning, which shows without a diag logger.
    if (Object.keys(given).length > 0) {
      process.emitWarning(`${message} (started already, by the register entry or an earlier call)`, {
        code: 'ERRATA_ALREADY_STARTED',
      });
    }
    return running;
  }
  const options = withEnvironment(given);
  // Disabled: no exporter is made, so a wrong endpoint is not reported either.
  if (flag('OTEL_SDK_DISABLED'))
    return disabledHandle(new ErrataSpanProcessor({ ...options, exporter: refusingExporter(DISABLED) }));
  const processor = createErrataSpanProcessor(options);
  let resource = defaultResource().merge(detectResources({ detectors: [envDetector] }));
  if (options.serviceName !== undefined) {
    resource = resource.merge(resourceFromAttributes({ 'service.name': options.serviceName }));
  }
  const provider = new NodeTracerProvider({
    resource,
    sampler: new RecordEverythingSampler(options.sampler),
    // OpenTelemetry's defaults, set here so that the OTEL_*ATTRIBUTE*_LIMIT variables a host sets for its own backend
    // do not cut Errata's spans: a failed call without its error.type, or shrunk JSON cut until it no longer parses,
    // would be read wrongly. Every text is bounded by textLimitBytes already.
    spanLimits: {
      attributeCountLimit: ERRATA_SPAN_ATTRIBUTE_COUNT_LIMIT,
      attributeValueLengthLimit: Infinity,
    },
    spanProcessors: [processor],
  });
  ensureContextManager();
  const stopServingApiTracers = serveApiTracers(provider);
  if (stopServingApiTracers === null) {
    safeDiag(() =>
      diag.info('@errata/sdk: a global tracer provider exists already; Errata exports its own spans only'),
    );
  }
  setErrataTracerProvider(provider);
  const capture: ToolCallCaptureConfig = {
    captureResults: options.captureResults,
    captureArguments: options.captureArguments,
    textLimitBytes: options.textLimitBytes,
    responseHook: options.responseHook,
  };
  setRunningCaptureConfig(capture);

  let instrumentation: McpClientInstrumentation | null = null;
  let unregister: (() => void) | undefined;
  if (options.instrumentMcpSdk !== false) {
    instrumentation = processInstrumentation ??= new McpClientInstrumentation(capture);
    instrumentation.setConfig(capture);
    unregister = registerInstrumentations({ instrumentations: [instrumentation], tracerProvider: provider });
    // registerInstrumentations enables only an instrumentation configured as disabled: after a shutdown, this one.
    instrumentation.enable();
  }

  // Nothing can settle once the event loop is empty: a run still open then never ends by itself.
  const flushOnExit = () => {
    endOpenRuns();
    void processor.forceFlush();
  };
  // process.exit() skips beforeExit: what is still queued then is lost, which the host hears of through diag.
  const warnOfUnsent = () => {
    const { queued } = processor.stats();
    if (queued === 0) return;
    safeDiag(() =>
      diag.warn(
        `@errata/sdk: ${queued} spans were not sent: the process exited before they were flushed ` +
          '(process.exit() skips the flush at exit; await errata.shutdown() before it)',
      ),
    );
  };
  if (options.flushOnExit !== false) {
    process.once('beforeExit', flushOnExit);
    process.once('exit', warnOfUnsent);
  }

  const handle: ErrataHandle = {
    tracerProvider: provider,
    processor,
    instrumentation,
    servesApiTracers: stopServingApiTracers !== null,
    stats: () => processor.stats(),
    forceFlush: () => processor.forceFlush(),
    shutdown: () => (shutDown ??= stop()),
  };
  let shutDown: Promise<void> | undefined;
  async function stop(): Promise<void> {
    // A handle shut down again after a newer startErrata must not unset the newer one's provider and settings.
    if (running === handle) {
      running = undefined;
      setErrataTracerProvider(undefined);
      setRunningCaptureConfig({});
    }
    process.removeListener('beforeExit', flushOnExit);
    process.removeListener('exit', warnOfUnsent);
    unregister?.();
    stopServingApiTracers?.();
    await provider.shutdown();
  }
  running = handle;
  return handle;
}
