// The reports benchmark's corpus: agent traces over the last 30 days, as agents instrumented with the Errata SDK
// export them. Realistic shapes: a few agents, five MCP servers with their own tools and failure modes, retries
// (blind and corrected, recovering or not), valid empties and empty-as-error, hidden failures, subagents that
// report back (complete, partial or failed, with or without the four elements), escalations after failures.
import { randomBytes } from 'node:crypto';
import { ERRORS, SERVERS, SDK_RESOURCE } from '../ingest/catalog.mjs';
import { hex, int, pick, random } from '../ingest/random.mjs';

const attribute = (key, value) => {
  if (Array.isArray(value))
    return { key, value: { arrayValue: { values: value.map((v) => ({ stringValue: v })) } } };
  if (typeof value === 'string') return { key, value: { stringValue: value } };
  if (typeof value === 'boolean') return { key, value: { boolValue: value } };
  if (Number.isInteger(value)) return { key, value: { intValue: value } };
  return { key, value: { doubleValue: value } };
};
const attributes = (record) =>
  Object.entries(record)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => attribute(key, value));

// Ids are unique per invocation (a random prefix), so a kept database can take another run's traces.
const RUN_PREFIX = randomBytes(4).toString('hex');
let ids = 0;
export const traceId = () => RUN_PREFIX + hex(4) + (++ids).toString(16).padStart(16, '0');
export const spanId = () => hex(4) + (++ids).toString(16).padStart(8, '0');
const ns = (ms) => (BigInt(Math.floor(ms)) * 1_000_000n + BigInt(int(0, 999_999))).toString();

const COORDINATORS = [
  { name: 'support-agent', servers: ['github', 'slack', 'postgres-mcp'] },
  { name: 'coding-agent', servers: ['github', 'filesystem', 'postgres-mcp'] },
  { name: 'ops-agent', servers: ['slack', 'postgres-mcp', 'filesystem'] },
];
const SUBAGENTS = [
  { name: 'web-researcher', servers: ['brave-search'] },
  { name: 'repo-explorer', servers: ['github', 'filesystem'] },
];
const SERVER = new Map(SERVERS.map((server) => [server.name, server]));
const SEARCH = /search|list|query/;
const NO_RESULTS = [
  '{"error":{"code":"NOT_FOUND","message":"No results found for the query"}}',
  'No results found.',
  '{"ok":false,"error":{"code":"NO_RESULTS","category":"not_found"}}',
];
const HIDDEN_FAILURES = [
  'Error: upstream request failed with status 502',
  '{"ok":false,"error":"timed out"}',
];

/** One attempt's result: outcome attributes for the span, and whether it failed (is worth a retry). */
function attemptResult(server, tool) {
  const roll = random();
  if (roll < 0.78) {
    const empty = SEARCH.test(tool) && random() < 0.12;
    return {
      failed: false,
      attrs: {
        'errata.result.is_error': false,
        'errata.result.empty': empty,
        'errata.result.item_count': empty ? 0 : int(1, 40),
      },
    };
  }
  if (roll < 0.8) {
    // a hidden failure: isError false, the text says it failed
    return {
      failed: false,
      attrs: { 'errata.result.is_error': false, 'errata.result.text': pick(HIDDEN_FAILURES) },
    };
  }
  if (roll < 0.84 && SEARCH.test(tool)) {
    // empty-as-error: "no results" reported as an error
    return {
      failed: true,
      status: 2,
      attrs: {
        'errata.result.is_error': true,
        'error.type': 'tool_error',
        'errata.result.text': pick(NO_RESULTS),
      },
    };
  }
  if (roll < 0.97) {
    const candidates = ERRORS.filter((error) => error.servers.includes(server.name));
    const error = pick(candidates);
    const declared = random() < 0.4;
    return {
      failed: true,
      status: 2,
      attrs: {
        'errata.result.is_error': true,
        'error.type': 'tool_error',
        'errata.result.text': error.text(),
        'errata.error.category': declared ? error.category : undefined,
        'errata.error.retryable': declared ? error.retryable : undefined,
        'errata.error.retry_after_ms': declared && error.retryable ? int(500, 5_000) : undefined,
      },
    };
  }
  if (roll < 0.99) return { failed: true, status: 2, attrs: { 'error.type': 'timeout' } };
  return { failed: true, status: 2, attrs: { 'error.type': '-32603', 'rpc.jsonrpc.error_code': '-32603' } };
}

/**
 * A run's tool calls on its servers; a failed call is retried up to three times (same or changed arguments,
 * after a short pause or none). Returns the spans and whether a failure stayed unrecovered.
 */
export function runCalls(run, servers, calls, clock) {
  const spans = [];
  let unrecovered = false;
  for (let c = 0; c < calls; c++) {
    const server = SERVER.get(pick(servers));
    const tool = pick(server.tools);
    let args = hex(8);
    for (let attempt = 0; attempt < 4; attempt++) {
      const result = attemptResult(server, tool);
      const start = clock.ms;
      const duration = int(20, result.failed ? 8_000 : 1_500);
      clock.ms += duration + int(50, 2_000);
      spans.push({
        traceId: run.traceId,
        spanId: spanId(),
        parentSpanId: run.spanId,
        name: `tools/call ${tool}`,
        kind: 3,
        startTimeUnixNano: ns(start),
        endTimeUnixNano: ns(start + duration),
        attributes: attributes({
          'mcp.method.name': 'tools/call',
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': tool,
          'mcp.session.id': run.sessionId,
          'network.transport': server.transport,
          'server.address': server.address,
          'server.port': server.port,
          'errata.server.name': server.name,
          'errata.server.version': random() < 0.9 ? server.version : `${server.version}-rc1`,
          'errata.args.hash': args,
          'errata.args.size': int(20, 800),
          'gen_ai.usage.input_tokens': int(200, 4_000),
          'gen_ai.usage.output_tokens': int(20, 400),
          ...result.attrs,
        }),
        status: { code: result.status ?? 0 },
      });
      if (!result.failed) {
        unrecovered = false;
        break;
      }
      unrecovered = true;
      if (random() < 0.35) break; // gives up
      if (random() < 0.5) args = hex(8); // corrects the arguments
    }
  }
  return { spans, unrecovered };
}

export function agentSpan(run, parentSpanId, name, role, startMs, endMs) {
  return {
    traceId: run.traceId,
    spanId: run.spanId,
    parentSpanId,
    name: `invoke_agent ${name}`,
    kind: 1,
    startTimeUnixNano: ns(startMs),
    endTimeUnixNano: ns(endMs),
    attributes: attributes({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': name,
      'gen_ai.agent.id': `${name}-${int(1, 4)}`,
      'errata.agent.role': role,
      'gen_ai.conversation.id': run.conversationId,
    }),
    status: { code: 0 },
  };
}

export const instant = (run, name, atMs, record) => ({
  traceId: run.traceId,
  spanId: spanId(),
  parentSpanId: run.spanId,
  name,
  kind: 1,
  startTimeUnixNano: ns(atMs),
  endTimeUnixNano: ns(atMs),
  attributes: attributes(record),
  status: { code: 0 },
});

/** One agent trace starting at `startMs`, its spans in export order (children end, and are sent, first). */
export function agentTrace(startMs) {
  const coordinator = pick(COORDINATORS);
  const run = { traceId: traceId(), spanId: spanId(), sessionId: hex(8), conversationId: hex(6) };
  const clock = { ms: startMs };
  const spans = agentTurn(run, coordinator.servers, clock);
  spans.push(agentSpan(run, null, coordinator.name, 'coordinator', startMs, clock.ms));
  return spans;
}

/**
 * One turn of a coordinator run on `servers`, from `clock` on (advanced past it), in export order: its calls, at times
 * a subagent run with its report, at times an escalation after an unrecovered failure. Not the run's own span.
 */
export function agentTurn(run, servers, clock) {
  const { spans, unrecovered } = runCalls(run, servers, int(3, 10), clock);
  if (random() < 0.2) {
    const subagent = pick(SUBAGENTS);
    const sub = { ...run, spanId: spanId() };
    const subStart = clock.ms;
    const work = runCalls(sub, subagent.servers, int(2, 6), clock);
    spans.push(...work.spans);
    const total = int(2, 8);
    const status = work.unrecovered
      ? pick(['partial', 'failed', 'complete'])
      : random() < 0.9
        ? 'complete'
        : 'partial';
    const full = random() < 0.5;
    spans.push(
      instant(sub, 'errata.subagent_report', clock.ms, {
        'errata.subagent.status': status,
        'errata.subagent.completed': status === 'complete' ? total : int(0, total - 1),
        'errata.subagent.total': total,
        'errata.subagent.attempted': status !== 'complete' && full ? ['search', 'fetch'] : undefined,
        'errata.subagent.alternatives':
          status !== 'complete' && full ? ['ask the user for a link'] : undefined,
        'errata.subagent.partial_results':
          status !== 'complete' && (full || random() < 0.5) ? int(0, 5) : undefined,
        'errata.error.category': status !== 'complete' && (full || random() < 0.5) ? 'transient' : undefined,
      }),
    );
    clock.ms += int(10, 200);
    spans.push(agentSpan(sub, run.spanId, subagent.name, 'subagent', subStart, clock.ms));
  }
  if (unrecovered && random() < 0.3) {
    spans.push(
      instant(run, 'errata.escalation', clock.ms, {
        'errata.escalation.target': pick(['human', 'human', 'user', 'coordinator']),
        'errata.escalation.reason': 'could not finish the task after a tool failure',
      }),
    );
  }
  clock.ms += int(10, 500);
  return spans;
}

export const toolCalls = (spans) => spans.reduce((n, span) => n + (span.kind === 3 ? 1 : 0), 0);

/** An OTLP export request of `spans` from one agent process. */
export function exportRequest(spans) {
  return {
    resourceSpans: [
      {
        resource: { attributes: SDK_RESOURCE.map(([key, value]) => attribute(key, value)) },
        scopeSpans: [{ scope: { name: '@errata/sdk', version: '0.1.0' }, spans }],
      },
    ],
  };
}
