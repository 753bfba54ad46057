/** Builders for the specs: spans as the Errata SDK and other instrumentations send them. Not built. */
import type { Outcome, ToolCallData } from './events';
import type { CallFact, RetryCategory } from './retries';
import type { FindingCall } from './findings-report';
import { normalizeSpan } from './normalize-span';
import { SpanKind, StatusCode, type AttributeValue, type Attributes, type SpanRecord } from './span';

export const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
export const MS = 1_000_000n;
/** A fixed epoch so times stay readable: 2026-01-01T00:00:00Z. */
export const T0 = 1_767_225_600_000n * MS;

export const sid = (n: number): string => n.toString(16).padStart(16, '0');

export interface SpanInit {
  readonly name: string;
  readonly kind?: number;
  readonly attributes?: Record<string, AttributeValue | undefined>;
  readonly status?: { code: number; message?: string };
  readonly startMs?: number;
  readonly durationMs?: number;
  readonly traceId?: string;
  readonly spanId?: string;
  readonly parentSpanId?: string | null;
  readonly resource?: Attributes;
}

export function makeSpan(init: SpanInit): SpanRecord {
  const start = T0 + BigInt(init.startMs ?? 0) * MS;
  const attributes = Object.fromEntries(
    Object.entries(init.attributes ?? {}).filter(([, v]) => v !== undefined),
  ) as Attributes;
  return {
    traceId: init.traceId ?? TRACE,
    spanId: init.spanId ?? sid(1),
    parentSpanId: init.parentSpanId ?? null,
    name: init.name,
    kind: init.kind ?? SpanKind.CLIENT,
    startTimeUnixNano: start,
    endTimeUnixNano: start + BigInt(init.durationMs ?? 120) * MS,
    attributes,
    status: { code: init.status?.code ?? StatusCode.UNSET, message: init.status?.message ?? '' },
    resource: init.resource ?? { 'service.name': 'support-agent' },
    scope: { name: '@errata/sdk', version: '0.1.0' },
  };
}

/** An MCP CallToolResult as a seed shows it. */
export interface McpResult {
  readonly isError?: boolean;
  readonly content?: readonly { readonly type: string; readonly text?: string }[];
  readonly structuredContent?: unknown;
}

export interface ToolSpanInit extends Omit<SpanInit, 'name'> {
  readonly server?: string;
  readonly empty?: boolean;
  readonly itemCount?: number;
}

/** A CLIENT `tools/call` span as the Errata SDK sends it for a tool result (DOMAIN.md §5). */
export function errataToolSpan(tool: string, result: McpResult, init: ToolSpanInit = {}): SpanRecord {
  const isError = result.isError === true;
  const text = (result.content ?? [])
    .filter((block) => block.type === 'text' && block.text !== undefined)
    .map((block) => block.text)
    .join('\n');
  const structured =
    result.structuredContent === undefined ? undefined : JSON.stringify(result.structuredContent);
  return makeSpan({
    ...init,
    name: `tools/call ${tool}`,
    kind: SpanKind.CLIENT,
    status: isError ? { code: StatusCode.ERROR } : init.status,
    attributes: {
      'mcp.method.name': 'tools/call',
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': tool,
      'jsonrpc.request.id': '7',
      'mcp.session.id': 'sess-1',
      'mcp.protocol.version': '2025-11-25',
      'network.transport': 'pipe',
      'errata.server.name': init.server ?? 'support-server',
      'errata.server.version': '1.2.0',
      'errata.result.is_error': isError,
      'error.type': isError ? 'tool_error' : undefined,
      'errata.result.empty': init.empty,
      'errata.result.item_count': init.itemCount,
      'errata.result.text': text === '' ? undefined : text,
      'errata.result.structured': structured,
      'errata.result.text_mirror': structured !== undefined && text === structured ? true : undefined,
      ...init.attributes,
    },
  });
}

/** A flat seed example (`{isError, errorCategory, …}` without an envelope): its payload is the text block. */
export function flatResult(example: { readonly isError?: boolean } & Record<string, unknown>): McpResult {
  const { isError, ...payload } = example;
  return { isError, content: [{ type: 'text', text: JSON.stringify(payload) }] };
}

/** A CLIENT span for a JSON-RPC error response. */
export function protocolErrorSpan(
  tool: string,
  code: number,
  message: string,
  init: ToolSpanInit = {},
): SpanRecord {
  return makeSpan({
    ...init,
    name: `tools/call ${tool}`,
    kind: SpanKind.CLIENT,
    status: { code: StatusCode.ERROR, message },
    attributes: {
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': tool,
      'errata.server.name': init.server ?? 'support-server',
      'error.type': String(code),
      'rpc.response.status_code': String(code),
      ...init.attributes,
    },
  });
}

/** normalizeSpan for a span that must be a tool call. */
export function toolCallOf(span: SpanRecord): ToolCallData {
  const event = normalizeSpan(span);
  if (event?.type !== 'ToolCallObserved') throw new Error(`not a tool call: ${event?.type ?? 'null'}`);
  return event.data;
}

/** A call of `tool` starting at `startMs` (ms after T0) lasting `durationMs`. */
export function fact(
  key: string,
  startMs: number,
  durationMs: number,
  outcome: Outcome,
  category: RetryCategory | null,
  extra: Partial<CallFact> = {},
): CallFact {
  return {
    key,
    traceId: TRACE,
    runId: 'run-1',
    server: 'support-server',
    tool: 'lookup_order',
    outcome,
    category,
    startNs: T0 + BigInt(startMs) * MS,
    endNs: T0 + BigInt(startMs + durationMs) * MS,
    argsHash: 'h1',
    retryOf: null,
    retryAfterMs: null,
    tokens: null,
    ...extra,
  };
}

/** A call as the reports read it (escalation, misclassification and findings facts), all flags off by default. */
export function reportCall(
  key: string,
  startMs: number,
  outcome: Outcome,
  category: RetryCategory | null,
  extra: Partial<FindingCall> = {},
): FindingCall {
  return {
    ...fact(key, startMs, 100, outcome, category),
    parentKey: null,
    serverSide: false,
    failureAsEmpty: false,
    customerExplanation: false,
    emptyAsError: false,
    evidence: null,
    sampleText: null,
    serverVersion: '1.0.0',
    declaredRetryable: null,
    findings: [],
    ...extra,
  };
}
