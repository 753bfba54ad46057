import { context, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { agentSpan, instantSpan, memoryTracer, seededRandom } from './seeded-spans';

const OUTCOMES = [
  { isError: false, empty: false, text: undefined },
  { isError: false, empty: true, text: '{"orders":[]}' },
  { isError: true, empty: false, text: '{"errorCategory":"transient","isRetryable":true,"retryAfterMs":50}' },
  {
    isError: true,
    empty: false,
    text: '{"ok":false,"error":{"code":"NO_TICKETS_FOUND","category":"not_found"}}',
  },
  {
    isError: true,
    empty: false,
    text: '{"errorCategory":"business","retriable":false,"customerExplanation":"Outside the window."}',
  },
  { isError: true, empty: false, text: 'TypeError: Cannot read properties of undefined' },
  { isError: false, empty: false, text: 'ERROR: Permission denied' },
] as const;

export interface CorpusOptions {
  readonly traces: number;
  readonly seed: number;
  /** When the first trace starts (ms since the epoch) and how far apart traces start. */
  readonly startMs?: number;
  readonly spacingMs?: number;
}

/**
 * A deterministic corpus of agent traces from a seeded generator, as the OpenTelemetry SDK exports them: a
 * coordinator run with tool calls of every outcome (retries among them), sometimes an escalation, and a
 * subagent run with its own calls and a report.
 */
export function generatedCorpus(options: CorpusOptions): ReadableSpan[] {
  const { traces, seed } = options;
  const next = seededRandom(seed);
  const { tracer, finished } = memoryTracer('generated-agent', 'corpus');
  const toolCall = (parent: ReturnType<typeof context.active>, tool: string, startMs: number) => {
    const outcome = OUTCOMES[next(OUTCOMES.length)]!;
    const attributes: Attributes = {
      'mcp.method.name': 'tools/call',
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': tool,
      'errata.server.name': `server-${tool.length % 3}`,
      'errata.server.version': '1.0.0',
      'errata.args.hash': `hash-${next(2)}`,
      'errata.args.size': 10,
      'errata.result.is_error': outcome.isError,
      'errata.result.empty': outcome.empty,
      ...(outcome.text === undefined ? {} : { 'errata.result.text': outcome.text }),
      ...(outcome.isError ? { 'error.type': 'tool_error' } : {}),
    };
    const span = tracer.startSpan(
      `tools/call ${tool}`,
      { kind: SpanKind.CLIENT, startTime: startMs, attributes },
      parent,
    );
    if (outcome.isError) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(startMs + 5 + next(20));
  };
  for (let t = 0; t < traces; t++) {
    const start = (options.startMs ?? Date.UTC(2026, 10, 30, 9)) + t * (options.spacingMs ?? 1_000);
    const coordinator = agentSpan(tracer, 'support', start, context.active(), 'coordinator');
    const inRun = trace.setSpan(context.active(), coordinator);
    const tools = ['lookup_order', 'search_tickets', 'process_refund'];
    for (let c = 0; c < 2 + next(4); c++) toolCall(inRun, tools[next(tools.length)]!, start + c * 40);
    if (next(2) === 0)
      instantSpan(tracer, inRun, 'errata.escalation', start + 300, {
        'errata.escalation.target': ['human', 'user', 'coordinator'][next(3)]!,
      });
    const subagent = agentSpan(tracer, 'research', start + 400, inRun);
    const inSub = trace.setSpan(inRun, subagent);
    for (let c = 0; c < 1 + next(3); c++) toolCall(inSub, 'search_web', start + 410 + c * 40);
    instantSpan(tracer, inSub, 'errata.subagent_report', start + 600, {
      'errata.subagent.status': ['complete', 'partial', 'failed'][next(3)]!,
      'errata.subagent.completed': next(4),
      'errata.subagent.total': 4,
      ...(next(2) === 0
        ? { 'errata.subagent.attempted': ['search_web'], 'errata.error.category': 'transient' }
        : {}),
    });
    subagent.end(start + 650);
    coordinator.end(start + 700);
  }
  return finished();
}
