import {
  context,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type SpanContext,
} from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { agentSpan, instantSpan, memoryTracer, seededRandom } from './seeded-spans';

const OUTCOMES = [
  { isError: false, empty: false, text: undefined },
  { isError: false, empty: false, text: undefined },
  { isError: false, empty: true, text: '{"orders":[]}' },
  { isError: true, empty: false, text: '{"errorCategory":"transient","isRetryable":true,"retryAfterMs":50}' },
  {
    isError: true,
    empty: false,
    text: '{"ok":false,"error":{"code":"NO_TICKETS_FOUND","category":"not_found"}}',
  },
  { isError: true, empty: false, text: '{"errorCategory":"business","retriable":false}' },
  { isError: false, empty: false, text: 'ERROR: Permission denied' },
] as const;

export interface LongTrace {
  /** Every span, in the order an exporter sends them (each once it ended). */
  readonly spans: ReadableSpan[];
  /** The session's trace. */
  readonly traceId: string;
  /** The session's own span, the parent of its calls. */
  readonly session: SpanContext;
}

/**
 * One agent session kept in one trace for hours, from a seeded generator: turns of tool calls of every outcome (retries
 * among them, inferred within the window and hinted from far back), subagent runs that report back, escalations, and
 * a second trace (a job run again later) whose calls a hint links to the session's: the dependencies a re-derivation
 * of a growing trace must keep.
 */
export function longTrace(options: { turns: number; seed: number; startMs: number }): LongTrace {
  const next = seededRandom(options.seed);
  const { tracer, finished } = memoryTracer('long-session');
  const agent = (name: string, startMs: number, parent: Context, role: string) =>
    agentSpan(tracer, name, startMs, parent, role);
  const failed: string[] = [];
  const call = (parent: Context, tool: string, startMs: number, extra: Attributes = {}): string => {
    const outcome = OUTCOMES[next(OUTCOMES.length)]!;
    const span = tracer.startSpan(
      `tools/call ${tool}`,
      {
        kind: SpanKind.CLIENT,
        startTime: startMs,
        attributes: {
          'mcp.method.name': 'tools/call',
          'gen_ai.tool.name': tool,
          'errata.server.name': `server-${tool.length % 3}`,
          'errata.args.hash': `hash-${next(3)}`,
          'errata.result.is_error': outcome.isError,
          'errata.result.empty': outcome.empty,
          ...(outcome.text === undefined ? {} : { 'errata.result.text': outcome.text }),
          ...(outcome.isError ? { 'error.type': 'tool_error' } : {}),
          ...extra,
        },
      },
      parent,
    );
    if (outcome.isError) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(startMs + 5 + next(200));
    const spanId = span.spanContext().spanId;
    if (outcome.isError) failed.push(spanId);
    return spanId;
  };
  const instant = (parent: Context, name: string, atMs: number, attributes: Attributes) =>
    instantSpan(tracer, parent, name, atMs, attributes);

  const session = agent('support', options.startMs, context.active(), 'coordinator');
  const inSession = trace.setSpan(context.active(), session);
  const tools = ['lookup_order', 'search_tickets', 'process_refund'];
  let clock = options.startMs;
  for (let turn = 0; turn < options.turns; turn++) {
    // Turns a minute apart, sometimes more than the retry window (10 minutes): chains end, and start again.
    clock += next(10) === 0 ? 15 * 60_000 : 60_000;
    for (let c = 0; c < 2 + next(4); c++) {
      // Now and then a hint names a failure of long ago, past any window.
      const hint =
        next(12) === 0 && failed.length > 0 ? { 'errata.retry.of': failed[next(failed.length)]! } : {};
      call(inSession, tools[next(tools.length)]!, clock + c * 1_000, hint);
    }
    if (next(3) === 0)
      instant(inSession, 'errata.escalation', clock + 5_000, { 'errata.escalation.target': 'human' });
    if (next(4) === 0) {
      const subagent = agent('research', clock + 6_000, inSession, 'subagent');
      const inSub = trace.setSpan(inSession, subagent);
      for (let c = 0; c < 1 + next(3); c++) call(inSub, 'search_web', clock + 6_100 + c * 1_000);
      instant(inSub, 'errata.subagent_report', clock + 9_000, {
        'errata.subagent.status': ['complete', 'partial', 'failed'][next(3)]!,
        'errata.subagent.completed': next(4),
        'errata.subagent.total': 4,
      });
      subagent.end(clock + 9_500);
    }
  }
  session.end(clock + 20_000);
  const traceId = session.spanContext().traceId;

  // The same job run again in a trace of its own, its first call a hinted retry of a failure in the session.
  const job = agent('support', clock + 30_000, context.active(), 'coordinator');
  const inJob = trace.setSpan(context.active(), job);
  if (failed.length > 0) call(inJob, 'lookup_order', clock + 31_000, { 'errata.retry.of': failed[0]! });
  call(inJob, 'lookup_order', clock + 32_000);
  job.end(clock + 40_000);
  return { spans: finished(), traceId, session: session.spanContext() };
}

/** One more call of the session, ok, at `atMs`: a span that arrives in a trace already long. */
export function laterCall(session: LongTrace, atMs: number): ReadableSpan {
  const { tracer, finished } = memoryTracer('long-session');
  const inSession = trace.setSpanContext(context.active(), session.session);
  tracer
    .startSpan(
      'tools/call archive_session',
      {
        kind: SpanKind.CLIENT,
        startTime: atMs,
        attributes: {
          'mcp.method.name': 'tools/call',
          'gen_ai.tool.name': 'archive_session',
          'errata.server.name': 'archive',
          'errata.result.is_error': false,
        },
      },
      inSession,
    )
    .end(atMs + 10);
  return finished()[0]!;
}
