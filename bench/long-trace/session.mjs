// The long-trace benchmark's spans: one agent session kept in ONE trace for hours (turn after turn of tool calls,
// some failing and retried, some subagent runs reporting back, some escalations), and the baseline: the same turns,
// each a short trace of its own, as the reports benchmark's corpus makes them.
import { int, hex } from '../ingest/random.mjs';
import { agentTrace, agentTurn, spanId, toolCalls, traceId } from '../reports/corpus.mjs';

/** The servers of the session's coordinator. */
const SERVERS = ['github', 'slack', 'postgres-mcp'];

/**
 * A session: its trace and coordinator run (whose own span an exporter sends only once the session ends, so never
 * here), and its clock, from `startMs` on.
 */
export function longSession(startMs) {
  const run = { traceId: traceId(), spanId: spanId(), sessionId: hex(8), conversationId: hex(6) };
  return { run, clock: { ms: startMs } };
}

/**
 * A source of spans in export order: `long` continues one session's trace, `short` starts a new short trace for
 * each turn (the reports corpus's agent traces). `take(n)` returns the next n spans, whole turns or not (an exporter
 * sends what ended, however a turn splits).
 */
export function spanSource(shape, startMs) {
  const session = longSession(startMs);
  const clock = { ms: startMs };
  let lastTrace = session.run.traceId;
  let buffered = [];
  let calls = 0;
  const turn = () => {
    if (shape === 'long') return agentTurn(session.run, SERVERS, session.clock);
    const spans = agentTrace(clock.ms);
    clock.ms = Number(BigInt(spans.at(-1).endTimeUnixNano) / 1_000_000n) + int(10, 500);
    return spans;
  };
  return {
    /** The tool calls taken so far. */
    calls: () => calls,
    /** The trace a timeline page is asked of: the session's, or the last short trace taken whole. */
    traceId: () => lastTrace,
    take(n) {
      while (buffered.length < n) buffered.push(...turn());
      const spans = buffered.slice(0, n);
      buffered = buffered.slice(n);
      calls += toolCalls(spans);
      // A short trace's root span comes last: the trace is whole once it is taken.
      for (const span of spans) if (span.parentSpanId === null) lastTrace = span.traceId;
      return spans;
    },
  };
}
