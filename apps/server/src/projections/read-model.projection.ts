import {
  classifyToolCall,
  type AgentRunData,
  type ErrataEvent,
  type SpanRef,
  type ToolCallData,
} from '@errata/domain';
import { timestampFromUnixNano } from '../database/timestamps';
import type { AgentRunRow, ToolCallRow } from '../repositories/read-model.repository';

export interface StoredEvent {
  readonly projectId: number;
  readonly type: string;
  readonly data: unknown;
}

export interface ReadModelChanges {
  readonly toolCalls: ToolCallRow[];
  readonly agentRuns: AgentRunRow[];
}

/**
 * The read models as a pure function of a batch of events: tool calls with their classification under the
 * current rules, and agent runs. Event types it does not know yet are skipped (later projections read them).
 */
export function projectEvents(events: readonly StoredEvent[]): ReadModelChanges {
  const changes: ReadModelChanges = { toolCalls: [], agentRuns: [] };
  for (const stored of events) {
    const event = { type: stored.type, data: stored.data } as ErrataEvent;
    if (event.type === 'ToolCallObserved') changes.toolCalls.push(toolCallRow(stored.projectId, event.data));
    else if (event.type === 'AgentRunObserved')
      changes.agentRuns.push(agentRunRow(stored.projectId, event.data));
  }
  return changes;
}

function spanColumns(projectId: number, span: SpanRef) {
  return {
    projectId,
    traceId: span.traceId,
    spanId: span.spanId,
    startTime: timestampFromUnixNano(span.startTimeUnixNano),
    parentSpanId: span.parentSpanId,
  };
}

function toolCallRow(projectId: number, call: ToolCallData): ToolCallRow {
  const classification = classifyToolCall(call);
  return {
    ...spanColumns(projectId, call.span),
    startNs: call.span.startTimeUnixNano,
    endNs: call.span.endTimeUnixNano,
    serverName: call.server.name,
    serverVersion: call.server.version,
    tool: call.tool,
    outcome: call.outcome,
    category: classification.category,
    categorySource: classification.source,
    declaredCategory: classification.declaredRaw,
    retryable: classification.retryable === null ? null : String(classification.retryable),
    emptyAsError: classification.emptyAsError,
    failureAsEmpty: classification.failureAsEmpty,
    argsHash: call.args.hash,
    retryOf: call.retryHint.of,
    retryAttempt: call.retryHint.attempt,
    retryAfterMs: call.declared.retryAfterMs,
    tokens: call.tokens,
    rulesVersion: classification.rulesVersion,
  };
}

function agentRunRow(projectId: number, run: AgentRunData): AgentRunRow {
  return {
    ...spanColumns(projectId, run.span),
    agentName: run.agentName,
    agentId: run.agentId,
    conversationId: run.conversationId,
    role: run.role,
  };
}
