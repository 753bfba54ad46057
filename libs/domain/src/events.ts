/**
 * The events of Errata's log. Each is a fact observed on the wire, named in the past tense; everything
 * derived from them by versioned rules (categories, retries, findings) lives in projections, never here.
 */
export interface Event<Type extends string, Data> {
  readonly type: Type;
  readonly data: Readonly<Data>;
}

/** How a tool call ended (DOMAIN.md §1). */
export type Outcome = 'ok' | 'ok_empty' | 'tool_error' | 'protocol_error' | 'timeout' | 'transport_error';

export const FAILED_OUTCOMES: readonly Outcome[] = [
  'tool_error',
  'protocol_error',
  'timeout',
  'transport_error',
];

/** Which instrumentation's vocabulary the span used; derivations say how sure they can be. */
export type SpanSource = 'errata' | 'semconv' | 'traceloop' | 'sentry';

/** Where a span sits in its trace; times are exact nanoseconds as decimal strings. */
export interface SpanRef {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | null;
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
}

export interface ToolCallData {
  readonly span: SpanRef;
  readonly source: SpanSource;
  readonly tool: string;
  readonly server: {
    readonly name: string | null;
    readonly version: string | null;
    readonly address: string | null;
    readonly port: number | null;
  };
  readonly mcp: {
    readonly sessionId: string | null;
    readonly protocolVersion: string | null;
    readonly requestId: string | null;
    readonly transport: string | null;
  };
  readonly outcome: Outcome;
  /** `error.type` as sent: `tool_error`, a JSON-RPC code, `timeout`, an exception name. */
  readonly errorType: string | null;
  /**
   * JSON-RPC error code as a string (`rpc.response.status_code`, `rpc.status_code`, or the deprecated int); for
   * a call without a tool result and without those, the code of an SDK `McpError` status message ("MCP error -32001: …").
   */
  readonly rpcStatusCode: string | null;
  /** HTTP status of the call (`http.response.status_code`, deprecated `http.status_code`), when the span has one. */
  readonly httpStatusCode: number | null;
  /** Span status description, redacted. */
  readonly statusMessage: string | null;
  readonly result: {
    readonly isError: boolean | null;
    readonly empty: boolean | null;
    readonly itemCount: number | null;
    /** Redacted and truncated. */
    readonly text: string | null;
    /** JSON of structuredContent, redacted and truncated. */
    readonly structured: string | null;
    readonly textMirror: boolean | null;
  };
  /** What the server declared, as received (`errata.error.*`). */
  readonly declared: {
    readonly category: string | null;
    readonly retryable: boolean | null;
    readonly code: string | null;
    readonly retryAfterMs: number | null;
  };
  readonly args: { readonly hash: string | null; readonly size: number | null };
  /**
   * The raw arguments (`gen_ai.tool.call.arguments`, or another instrumentation's), redacted and cut: present only
   * for a project that stores them (DOMAIN.md §6), null when the span carried none.
   */
  readonly arguments?: string | null;
  readonly retryHint: { readonly of: string | null; readonly attempt: number | null };
  /** Tokens the runtime reported for this call (`gen_ai.usage.*`), when it did. */
  readonly tokens: number | null;
}

export type AgentRole = 'coordinator' | 'subagent';

export interface AgentRunData {
  readonly span: SpanRef;
  readonly agentName: string | null;
  readonly agentId: string | null;
  readonly conversationId: string | null;
  readonly role: AgentRole | null;
}

export type EscalationTarget = 'human' | 'user' | 'coordinator';

export interface EscalationData {
  readonly span: SpanRef;
  readonly target: EscalationTarget;
  /** Redacted. */
  readonly reason: string | null;
}

export type SubagentStatus = 'complete' | 'partial' | 'failed';

export interface SubagentReportData {
  readonly span: SpanRef;
  readonly status: SubagentStatus;
  readonly completed: number | null;
  readonly total: number | null;
  readonly attempted: readonly string[] | null;
  readonly alternatives: readonly string[] | null;
  /** An item count, or a redacted JSON string of what came back. */
  readonly partialResults: number | string | null;
  readonly category: string | null;
  readonly retryable: boolean | null;
}

export type ToolCallObserved = Event<'ToolCallObserved', ToolCallData>;
export type AgentRunObserved = Event<'AgentRunObserved', AgentRunData>;
export type EscalationObserved = Event<'EscalationObserved', EscalationData>;
export type SubagentReportObserved = Event<'SubagentReportObserved', SubagentReportData>;

export type ErrataEvent = ToolCallObserved | AgentRunObserved | EscalationObserved | SubagentReportObserved;
export type ErrataEventType = ErrataEvent['type'];
