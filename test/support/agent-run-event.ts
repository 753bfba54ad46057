import type { NewEvent } from '../../apps/server/src/repositories/event.repository';

export const AGENT_RUN_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

/** An `AgentRunObserved` event as ingest stores it, for appending to the log directly (nothing wakes the projector). */
export function agentRunEvent(spanId: string, startMicros = Date.UTC(2026, 10, 30, 15) * 1000 + 1): NewEvent {
  return {
    traceId: AGENT_RUN_TRACE_ID,
    spanId,
    parentSpanId: null,
    startMicros,
    endMicros: startMicros,
    type: 'AgentRunObserved',
    serverName: null,
    toolName: null,
    outcome: null,
    data: {
      span: {
        traceId: AGENT_RUN_TRACE_ID,
        spanId,
        parentSpanId: null,
        startTimeUnixNano: '1',
        endTimeUnixNano: '2',
      },
      agentName: 'a',
      agentId: null,
      conversationId: null,
      role: null,
    },
  };
}
