// What each variant installs before the MCP SDK is loaded, how it instruments the client, how the child checks
// that the instrumentation really took hold, and which exported spans are its tools/call spans.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ERRATA_SDK_ENTRY, ROOT } from './settings.mjs';

const require = createRequire(import.meta.url);

const ERRATA_WRAPPED = Symbol.for('@errata/sdk.wrapped');

const errataToolSpan = (span) =>
  span.name.startsWith('tools/call ') && span.attributes['mcp.method.name'] === 'tools/call';
const traceloopToolSpan = (span) =>
  span.attributes['traceloop.span.kind'] === 'tool' && span.name.endsWith('.tool');

/**
 * The pieces of Errata's per-call work an ablation variant replaces, each by a constant, in the built modules the
 * SDK calls them through (it reads their exports on every call). What is left is the rest of `errata`.
 */
const PIECES = {
  'result-analysis': () => {
    const toolResult = require(join(ROOT, 'libs/sdk/dist/tool-result.js'));
    toolResult.toolResultAttributes = (result) => ({
      'errata.result.is_error': result?.isError === true,
      'errata.result.empty': false,
    });
  },
  'args-hash': () => {
    const fingerprint = { hash: '0'.repeat(32), size: 20 };
    require(join(ROOT, 'libs/domain/dist/args-hash.js')).argsFingerprint = () => fingerprint;
  },
  connection: () => {
    const none = {};
    require(join(ROOT, 'libs/sdk/dist/mcp-connection.js')).connectionAttributes = () => none;
  },
  'trace-context': () => {
    // Both ways the SDK writes the traceparent: the global propagator and its W3C fallback.
    require('@opentelemetry/api').propagation.inject = () => undefined;
    require('@opentelemetry/core').CompositePropagator.prototype.inject = () => undefined;
  },
  'retry-memory': () => {
    require(join(ROOT, 'libs/sdk/dist/tool-call-hints.js')).rememberFinishedCall = () => undefined;
  },
};

/** `errata`, with these pieces replaced before the MCP SDK is loaded. */
function errataWithout(pieces, label) {
  return {
    ...VARIANTS_BASE.errata,
    label,
    install: (tracing) => {
      const hooks = VARIANTS_BASE.errata.install(tracing);
      for (const piece of pieces) PIECES[piece]();
      return hooks;
    },
  };
}

/**
 * The floor of any instrumentation that records each call as a span in the active context: start a CLIENT span,
 * run the call in its context, mark a tool error, end the span. What `errata` and `traceloop` add above this is
 * what they read and record.
 */
function wrapWithBareSpan(Client, api, tracer) {
  const original = Client.prototype.callTool;
  Client.prototype.callTool = function callTool(params, ...rest) {
    const span = tracer.startSpan(`tools/call ${params.name}`, {
      kind: api.SpanKind.CLIENT,
      attributes: {
        'mcp.method.name': 'tools/call',
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': params.name,
      },
    });
    const pending = api.context.with(api.trace.setSpan(api.context.active(), span), () =>
      original.call(this, params, ...rest),
    );
    return pending.then(
      (result) => {
        if (result?.isError === true) span.setStatus({ code: api.SpanStatusCode.ERROR });
        span.end();
        return result;
      },
      (error) => {
        span.setStatus({ code: api.SpanStatusCode.ERROR });
        span.end();
        throw error;
      },
    );
  };
}

/**
 * name → { label, tracing, instrumentsMcp, isToolSpan, install(tracing) }. `install` runs before any MCP SDK module is required
 * and returns hooks for workload.connectPair: `onClientClass(Client)` (after the client module is loaded; returns
 * how the class got instrumented, or throws if it did not) and `instrumentClient(client)` (each new client).
 */
const VARIANTS_BASE = {
  none: {
    label: 'uninstrumented (no OpenTelemetry at all)',
    tracing: false,
    instrumentsMcp: false,
    install: () => ({ onClientClass: () => 'nothing' }),
  },

  'otel-only': {
    label:
      'OpenTelemetry set up (provider, BatchSpanProcessor, AsyncLocalStorage context active), MCP not instrumented',
    tracing: true,
    instrumentsMcp: false,
    isToolSpan: () => false,
    install: ({ api }) => {
      // AsyncLocalStorage installs its promise hook on its first run(): what any traced process pays anyway.
      api.context.with(api.ROOT_CONTEXT, () => undefined);
      return { onClientClass: () => 'nothing (context manager active)' };
    },
  },

  'bare-span': {
    label:
      'one CLIENT span per callTool, three constant-shaped attributes, nothing read from the call or its result',
    tracing: true,
    instrumentsMcp: true,
    isToolSpan: errataToolSpan,
    install: ({ api, provider }) => ({
      onClientClass: (Client) => {
        wrapWithBareSpan(Client, api, provider.getTracer('bench-bare-span'));
        return 'Client.prototype.callTool wrapped by the bench (bare-span)';
      },
    }),
  },

  errata: {
    label: '@errata/sdk McpClientInstrumentation (patches Client.prototype)',
    tracing: true,
    instrumentsMcp: true,
    isToolSpan: errataToolSpan,
    install: ({ provider }) => {
      const { McpClientInstrumentation } = require(ERRATA_SDK_ENTRY);
      const instrumentation = new McpClientInstrumentation();
      instrumentation.setTracerProvider(provider);
      return {
        onClientClass: (Client) => {
          if (Client.prototype.callTool[ERRATA_WRAPPED] !== true) {
            throw new Error('McpClientInstrumentation did not patch Client.prototype.callTool');
          }
          return 'require hook (McpClientInstrumentation, require-in-the-middle)';
        },
      };
    },
  },

  'errata-manual': {
    label: '@errata/sdk instrumentMcpClient(client) (global tracer provider)',
    tracing: true,
    instrumentsMcp: true,
    isToolSpan: errataToolSpan,
    install: () => {
      const { instrumentMcpClient } = require(ERRATA_SDK_ENTRY);
      return {
        onClientClass: (Client) => {
          if (Client.prototype.callTool[ERRATA_WRAPPED] === true)
            throw new Error('Client.prototype is patched');
          return 'instrumentMcpClient(client)';
        },
        instrumentClient: (client) => {
          instrumentMcpClient(client);
          if (client.callTool[ERRATA_WRAPPED] !== true)
            throw new Error('instrumentMcpClient did not wrap callTool');
          return client;
        },
      };
    },
  },

  traceloop: {
    label: '@traceloop/instrumentation-mcp McpInstrumentation (default config: traceContent on)',
    tracing: true,
    instrumentsMcp: true,
    isToolSpan: traceloopToolSpan,
    install: ({ provider }) => {
      const { McpInstrumentation } = require('@traceloop/instrumentation-mcp');
      const instrumentation = new McpInstrumentation();
      instrumentation.setTracerProvider(provider);
      return {
        // Its require hooks name "@modelcontextprotocol/sdk/client/index.js"; if they did not fire for this SDK
        // layout, fall back to the API it documents for that case.
        onClientClass: (Client) => {
          if (Client.prototype.request.__wrapped === true) return 'require hook (require-in-the-middle)';
          instrumentation.manuallyInstrument({ Client });
          if (Client.prototype.request.__wrapped !== true)
            throw new Error('manuallyInstrument did not wrap request');
          return 'manuallyInstrument({ Client }) (its require hook did not fire)';
        },
      };
    },
  },
};

export const VARIANTS = {
  ...VARIANTS_BASE,
  'errata-without-result-analysis': errataWithout(
    ['result-analysis'],
    'errata without the result analysis (only is_error from the result; no empty, item count, mirror, declared fields, texts)',
  ),
  'errata-without-args-hash': errataWithout(['args-hash'], 'errata without the arguments hash (a constant)'),
  'errata-without-connection': errataWithout(
    ['connection'],
    'errata without the connection attributes (server name and version, transport, session, protocol version)',
  ),
  'errata-without-trace-context': errataWithout(
    ['trace-context'],
    'errata without writing the traceparent into params._meta (the params are still copied)',
  ),
  'errata-without-retry-memory': errataWithout(
    ['retry-memory'],
    'errata without remembering which call each result or error came from (retryOf by result)',
  ),
  'errata-without-all-five': errataWithout(
    Object.keys(PIECES),
    'errata without any of the five pieces above: the span, its context and the call wrapping',
  ),
};
