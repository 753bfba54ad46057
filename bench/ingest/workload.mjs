// The OTLP/HTTP protobuf request bodies the benchmark POSTs: MCP tool-call spans as the Errata instrumentation
// exports them, generated once per invocation and reused by every run.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ERRORS, SDK_RESOURCE, WEIGHTED_SERVERS } from './catalog.mjs';
import { hex, int, pick, random } from './random.mjs';
import { ROOT, SPANS_PER_REQUEST } from './settings.mjs';

const require = createRequire(import.meta.url);
const { encodeTraceRequestProtobuf } = require(join(ROOT, 'libs/otlp/dist/index.js'));

function attribute(key, value) {
  if (typeof value === 'string') return { key, value: { stringValue: value } };
  if (typeof value === 'boolean') return { key, value: { boolValue: value } };
  if (Number.isInteger(value)) return { key, value: { intValue: value } };
  return { key, value: { doubleValue: value } };
}

let idCounter = 0;
/** Unique across the whole invocation: random bytes, then a counter. Warm-up trace ids start with byte 00. */
function newTraceId(warmup) {
  const first = warmup ? '00' : int(1, 255).toString(16).padStart(2, '0');
  return first + hex(7) + (++idCounter).toString(16).padStart(16, '0');
}
const newSpanId = () => hex(4) + (++idCounter).toString(16).padStart(8, '0');

const CALLS_PER_TRACE = 8;

/** One tool call span as the Errata MCP client instrumentation exports it (CLIENT, `tools/call <tool>`). */
function toolCallSpan(trace, startMs) {
  const server = trace.server;
  const tool = pick(server.tools);
  const isError = random() < 0.15;
  const itemCount = isError ? 0 : random() < 0.06 ? 0 : int(1, 50);
  const durationNs = BigInt(int(3, isError ? 30_000 : 2_500)) * 1_000_000n + BigInt(int(0, 999_999));
  const start = BigInt(startMs) * 1_000_000n + BigInt(int(0, 999_999));
  const attributes = [
    attribute('mcp.method.name', 'tools/call'),
    attribute('gen_ai.operation.name', 'execute_tool'),
    attribute('gen_ai.tool.name', tool),
    attribute('jsonrpc.request.id', String(trace.nextRequestId++)),
    attribute('mcp.session.id', trace.sessionId),
    attribute('mcp.protocol.version', '2025-06-18'),
    attribute('network.transport', server.transport),
    attribute('server.address', server.address),
    attribute('server.port', server.port),
    attribute('errata.server.name', server.name),
    attribute('errata.server.version', server.version),
    attribute('errata.result.is_error', isError),
    attribute('errata.result.empty', !isError && itemCount === 0),
    attribute('errata.result.item_count', itemCount),
    attribute('errata.args.hash', hex(16)),
    attribute('errata.args.size', int(20, 2_000)),
  ];
  if (isError) {
    const candidates = ERRORS.filter((error) => error.servers.includes(server.name));
    const error = pick(candidates);
    attributes.push(attribute('error.type', 'tool_error'), attribute('errata.result.text', error.text()));
    if (random() < 0.4) {
      attributes.push(attribute('errata.error.category', error.category));
      attributes.push(attribute('errata.error.retryable', error.retryable));
    }
  }
  return {
    traceId: trace.traceId,
    spanId: newSpanId(),
    parentSpanId: trace.agentSpanId,
    name: `tools/call ${tool}`,
    kind: 3,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: (start + durationNs).toString(),
    attributes,
    status: isError ? { code: 2 } : { code: 0 },
  };
}

function newTrace(warmup, startMs) {
  return {
    traceId: newTraceId(warmup),
    agentSpanId: newSpanId(), // the invoke_agent span, exported in another batch
    sessionId: `${hex(4)}-${hex(2)}-4${hex(2).slice(1)}-8${hex(2).slice(1)}-${hex(6)}`,
    server: pick(WEIGHTED_SERVERS),
    nextRequestId: int(1, 20),
    calls: 0,
    clockMs: startMs,
  };
}

/** `count` protobuf request bodies of SPANS_PER_REQUEST spans each. */
export function generateBodies(count, warmup) {
  const bodies = [];
  let clockMs = Date.now() - 3_600_000;
  let trace = newTrace(warmup, clockMs);
  for (let r = 0; r < count; r++) {
    const spans = [];
    for (let s = 0; s < SPANS_PER_REQUEST; s++) {
      if (trace.calls === CALLS_PER_TRACE) trace = newTrace(warmup, (clockMs += int(0, 50)));
      trace.clockMs += int(50, 4_000);
      spans.push(toolCallSpan(trace, trace.clockMs));
      trace.calls++;
    }
    const request = {
      resourceSpans: [
        {
          resource: { attributes: SDK_RESOURCE.map(([key, value]) => attribute(key, value)) },
          scopeSpans: [
            {
              scope: { name: '@errata/mcp-instrumentation', version: '0.4.0' },
              spans,
              schemaUrl: 'https://opentelemetry.io/schemas/1.34.0',
            },
          ],
          schemaUrl: 'https://opentelemetry.io/schemas/1.34.0',
        },
      ],
    };
    bodies.push(encodeTraceRequestProtobuf(request));
  }
  return bodies;
}
