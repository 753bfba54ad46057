/**
 * What startErrata does to the OpenTelemetry API's globals, and no more: without a host provider, Errata's provider
 * serves the API's tracers through the API's proxy, leaving the global slot to a host SDK started later; and a
 * context manager is installed when none works. No propagator is registered.
 */
import {
  context,
  createContextKey,
  ProxyTracerProvider,
  trace,
  type Context,
  type Span,
  type SpanOptions,
  type Tracer,
  type TracerOptions,
  type TracerProvider,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { PACKAGE_NAME } from './version';

/** The API's proxy provider while no provider is registered globally (its delegate then serves the API's tracers). */
function unregisteredApiProxy(): ProxyTracerProvider | null {
  const global = trace.getTracerProvider();
  return global instanceof ProxyTracerProvider && global.getDelegateTracer(PACKAGE_NAME) === undefined
    ? global
    : null;
}

/**
 * Errata's provider hands out the API's tracers (so other instrumentations' MCP spans reach it), yet the global
 * slot stays free: `NodeSDK.start()` or `NodeTracerProvider.register()` after startErrata still registers the
 * host's provider, which then serves the API, and the host keeps its spans. Registering Errata's provider instead
 * would make the host's registration fail with only a `diag` error, and every host span would be lost.
 */
export function serveApiTracers(provider: TracerProvider): (() => void) | null {
  const proxy = unregisteredApiProxy();
  if (proxy === null) return null;
  const serving = new ApiTracerProvider(proxy, provider);
  proxy.setDelegate(serving);
  return () => {
    // Back to "no provider" (the API has no unset), unless a host provider has taken over since.
    if (proxy.getDelegate() === serving) proxy.setDelegate(undefined as unknown as TracerProvider);
  };
}

/**
 * What the API's proxy hands out while Errata serves it. The proxy gives out its delegate's tracers, and
 * instrumentations keep theirs: these ask the proxy at each span which provider serves the API now, so that a
 * tracer taken before the host registered its provider moves to the host's provider with it.
 */
class ApiTracerProvider implements TracerProvider {
  constructor(
    private readonly proxy: ProxyTracerProvider,
    private readonly errata: TracerProvider,
  ) {}

  getTracer(name: string, version?: string, options?: TracerOptions): Tracer {
    return new ForwardingTracer(() => {
      const current = this.proxy.getDelegate();
      return (current === this ? this.errata : current).getTracer(name, version, options);
    });
  }
}

class ForwardingTracer implements Tracer {
  constructor(private readonly current: () => Tracer) {}

  startSpan(name: string, options?: SpanOptions, spanContext?: Context): Span {
    return this.current().startSpan(name, options, spanContext);
  }

  startActiveSpan: Tracer['startActiveSpan'] = ((...args: unknown[]) => {
    const tracer = this.current();
    return (tracer.startActiveSpan as (...forwarded: unknown[]) => unknown).apply(tracer, args);
  }) as Tracer['startActiveSpan'];
}

const CONTEXT_PROBE = createContextKey('@errata/sdk context probe');

/**
 * Runs, subagents and tool calls find their parents in the active context. A host that registered only a tracer
 * provider (`trace.setGlobalTracerProvider(new BasicTracerProvider(...))`) left the API's no-op context manager,
 * under which every span would be a root of its own trace.
 */
export function ensureContextManager(): void {
  const marked = context.active().setValue(CONTEXT_PROBE, true);
  const propagates = context.with(marked, () => context.active().getValue(CONTEXT_PROBE) === true);
  if (!propagates) context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}
