/**
 * Span → event (DOMAIN.md §5). Pure: one span in, one event or null out. Null means "none of ours": the
 * server counts it and drops it.
 */
import { argsFingerprint } from './args-hash';
import { isRecord, parseJson, readBool, readInt, readString, readStringArray } from './attributes';
import type {
  AgentRole,
  AgentRunObserved,
  ErrataEvent,
  EscalationObserved,
  EscalationTarget,
  Outcome,
  SpanRef,
  SpanSource,
  SubagentReportObserved,
  SubagentStatus,
  ToolCallData,
  ToolCallObserved,
} from './events';
import { deriveOutcome, integerCode, messageExplainsNoResult, rpcCodeFromMessage } from './outcome';
import { redact, redactIdentifier, storedText, truncateUtf8 } from './redaction';
import { failureSignalOf, isEmptyListResult, saysNoResults } from './result-signals';
import { SpanKind, StatusCode, type Attributes, type SpanRecord } from './span';

export interface NormalizeOptions {
  /** Byte limit of every stored text (result text, structured JSON, messages, reasons). Default 2048. */
  readonly textLimitBytes?: number;
  /**
   * Keep a tool call's raw arguments (redacted and cut like any text) where the span carries them: only for a project
   * that opted in (DOMAIN.md §6). Otherwise only their hash and size are kept. Default false.
   */
  readonly storeArguments?: boolean;
}

export const DEFAULT_TEXT_LIMIT_BYTES = 2048;

/** Tool name used when a tool-call span names no tool at all. */
export const UNKNOWN_TOOL = '(unknown)';

export const ESCALATION_SPAN = 'errata.escalation';
export const SUBAGENT_REPORT_SPAN = 'errata.subagent_report';

/** `attempted` / `alternatives` keep at most this many items, each cut to the text limit. */
export const MAX_REPORT_LIST_ITEMS = 100;

/**
 * Names (tool, server and its version, agent name and id, conversation) keep at most this many UTF-8 bytes. They
 * are keys of the reports, indexed together in PostgreSQL, whose index rows hold at most 2,704 bytes: one 3,000-byte
 * tool name stopped every projection. MCP tool names have at most 128 characters.
 */
export const MAX_NAME_BYTES = 256;

/** A name as Errata keys it: cut to MAX_NAME_BYTES. Report filters read the names they are given so too. */
export const storedName = (value: string): string => truncateUtf8(value, MAX_NAME_BYTES);
const nameOf = (value: string | null): string | null => (value === null ? null : storedName(value));

/**
 * A short free-text attribute that is no key of the reports (error type, status code, protocol version, transport),
 * as stored: any exporter may put anything there, a credential or an e-mail address included, so it is redacted like
 * every stored text, and cut to MAX_NAME_BYTES like a name. Empty → null.
 */
const storedShortText = (value: string | null): string | null => storedText(value, MAX_NAME_BYTES);

/**
 * A session, request or conversation id as stored: kept as sent so that it still finds the server's session or the
 * agent's conversation, digits included, but a credential or an e-mail address sent as one is replaced; cut to
 * MAX_NAME_BYTES. Empty → null.
 */
const storedId = (value: string | null): string | null =>
  value === null || value === '' ? null : truncateUtf8(redactIdentifier(value), MAX_NAME_BYTES);

/** A span id as `errata.retry.of` names the retried call: 16 hex digits; anything else is no hint. */
const SPAN_ID = /^[0-9a-f]{16}$/;

const ESCALATION_TARGETS: ReadonlySet<string> = new Set<EscalationTarget>(['human', 'user', 'coordinator']);
const SUBAGENT_STATUSES: ReadonlySet<string> = new Set<SubagentStatus>(['complete', 'partial', 'failed']);
const AGENT_ROLES: ReadonlySet<string> = new Set<AgentRole>(['coordinator', 'subagent']);

export function normalizeSpan(span: SpanRecord, options: NormalizeOptions = {}): ErrataEvent | null {
  const limit = options.textLimitBytes ?? DEFAULT_TEXT_LIMIT_BYTES;
  if (span.name === ESCALATION_SPAN) return escalation(span, limit);
  if (span.name === SUBAGENT_REPORT_SPAN) return subagentReport(span, limit);
  if (isAgentSpan(span)) return agentRun(span);
  const source = toolCallSource(span);
  return source === null ? null : toolCall(span, source, limit, options.storeArguments === true);
}

export function spanRef(span: SpanRecord): SpanRef {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    startTimeUnixNano: span.startTimeUnixNano.toString(),
    endTimeUnixNano: span.endTimeUnixNano.toString(),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Agent runs, escalations, subagent reports

/** `invoke_agent {name}` spans, or any span with `gen_ai.operation.name` = invoke_agent. */
/** `traceloop.span.kind` of Traceloop's agent spans. */
const TRACELOOP_AGENT_KIND = 'agent';

export function isAgentSpan(span: SpanRecord): boolean {
  return (
    span.name === 'invoke_agent' ||
    span.name.startsWith('invoke_agent ') ||
    readString(span.attributes, 'gen_ai.operation.name') === 'invoke_agent' ||
    // Traceloop's `withAgent` span (`{name}.agent`); its gen_ai.agent.name is on every span inside it, tools too.
    readString(span.attributes, 'traceloop.span.kind') === TRACELOOP_AGENT_KIND
  );
}

function agentRun(span: SpanRecord): AgentRunObserved {
  const a = span.attributes;
  const role = readString(a, 'errata.agent.role')?.trim().toLowerCase() ?? null;
  const nameFromSpan = span.name.startsWith('invoke_agent ')
    ? span.name.slice('invoke_agent '.length).trim()
    : '';
  return {
    type: 'AgentRunObserved',
    data: {
      span: spanRef(span),
      agentName: nameOf(
        readString(a, 'gen_ai.agent.name') ??
          (nameFromSpan === '' ? readString(a, 'traceloop.entity.name') : nameFromSpan),
      ),
      agentId: nameOf(readString(a, 'gen_ai.agent.id')),
      conversationId: storedId(readString(a, 'gen_ai.conversation.id')),
      role: role !== null && AGENT_ROLES.has(role) ? (role as AgentRole) : null,
    },
  };
}

/** An escalation with a missing or unknown target is not one of ours: null (dropped and counted). */
function escalation(span: SpanRecord, limit: number): EscalationObserved | null {
  const target = readString(span.attributes, 'errata.escalation.target')?.trim().toLowerCase() ?? null;
  if (target === null || !ESCALATION_TARGETS.has(target)) return null;
  return {
    type: 'EscalationObserved',
    data: {
      span: spanRef(span),
      target: target as EscalationTarget,
      reason: storedText(readString(span.attributes, 'errata.escalation.reason'), limit),
    },
  };
}

/** A report with a missing or unknown status is dropped like an invalid escalation. */
function subagentReport(span: SpanRecord, limit: number): SubagentReportObserved | null {
  const a = span.attributes;
  const status = readString(a, 'errata.subagent.status')?.trim().toLowerCase() ?? null;
  if (status === null || !SUBAGENT_STATUSES.has(status)) return null;
  const count = (key: string): number | null => {
    const n = readInt(a, key);
    return n !== null && n >= 0 ? n : null;
  };
  const list = (key: string): string[] | null =>
    readStringArray(a, key)
      ?.slice(0, MAX_REPORT_LIST_ITEMS)
      .map((item) => truncateUtf8(redact(item), limit)) ?? null;
  return {
    type: 'SubagentReportObserved',
    data: {
      span: spanRef(span),
      status: status as SubagentStatus,
      completed: count('errata.subagent.completed'),
      total: count('errata.subagent.total'),
      attempted: list('errata.subagent.attempted'),
      alternatives: list('errata.subagent.alternatives'),
      partialResults: partialResults(a, limit),
      category: storedText(readString(a, 'errata.error.category'), limit),
      retryable: readBool(a, 'errata.error.retryable'),
    },
  };
}

function partialResults(a: Attributes, limit: number): number | string | null {
  const key = 'errata.subagent.partial_results';
  const n = readInt(a, key);
  if (n !== null) return n;
  const value = a[key];
  if (value === undefined || value === null) return null;
  return storedText(typeof value === 'string' ? value : JSON.stringify(value), limit);
}

// ---------------------------------------------------------------------------------------------------------
// Tool calls

const hasKeyWithPrefix = (a: Attributes, prefix: string): boolean =>
  Object.keys(a).some((k) => k.startsWith(prefix));

/**
 * Which vocabulary makes this span a tool call, or null when it is none:
 *  - errata: an MCP tool call (`mcp.method.name` = tools/call, or `gen_ai.operation.name` = execute_tool with
 *    an `mcp.*` or `errata.*` attribute) carrying any `errata.*` attribute; any kind except SERVER;
 *  - sentry: `mcp.tool.name` / `mcp.tool.result.is_error` / Sentry's MCP origin (Sentry instruments MCP servers
 *    only, so its SERVER spans are accepted; one under a client span of the same call is paired with it when the
 *    trace is derived, `deriveTraceFacts`);
 *  - semconv: an MCP tool call without `errata.*` attributes; any kind except SERVER;
 *  - traceloop: `traceloop.span.kind` = tool; any kind except SERVER.
 * Other SERVER spans are the MCP server's view of a call the client span already reports: counting both would
 * double every call, and only the client sees timeouts and transport failures.
 */
export function toolCallSource(span: SpanRecord): SpanSource | null {
  const a = span.attributes;
  const method = readString(a, 'mcp.method.name');
  const errata = hasKeyWithPrefix(a, 'errata.');
  const mcpToolCall =
    method === 'tools/call' ||
    (readString(a, 'gen_ai.operation.name') === 'execute_tool' && (errata || hasKeyWithPrefix(a, 'mcp.')));
  const server = span.kind === SpanKind.SERVER;
  if (mcpToolCall && errata && !server) return 'errata';
  const sentry =
    a['mcp.tool.name'] !== undefined ||
    a['mcp.tool.result.is_error'] !== undefined ||
    readString(a, 'sentry.origin')?.startsWith('auto.function.mcp_server') === true;
  if (sentry && (method === null || method === 'tools/call')) return 'sentry';
  if (server) return null;
  if (mcpToolCall) return 'semconv';
  if (method === null && readString(a, 'traceloop.span.kind') === 'tool') return 'traceloop';
  return null;
}

function toolName(span: SpanRecord): string {
  const a = span.attributes;
  const fromSpanName = (prefix: string): string | null =>
    span.name.startsWith(prefix) && span.name.length > prefix.length
      ? span.name.slice(prefix.length).trim()
      : null;
  const traceloopName = span.name.endsWith('.tool') && span.name.length > 5 ? span.name.slice(0, -5) : null;
  const name =
    readString(a, 'gen_ai.tool.name') ??
    fromSpanName('tools/call ') ??
    readString(a, 'mcp.tool.name') ??
    readString(a, 'traceloop.entity.name') ??
    fromSpanName('execute_tool ') ??
    (readString(a, 'traceloop.span.kind') === 'tool' ? traceloopName : null);
  return (name === '' ? null : nameOf(name)) ?? UNKNOWN_TOOL;
}

interface ResultSignals {
  readonly isError: boolean | null;
  readonly empty: boolean | null;
  readonly text: string | null;
}

/**
 * Traceloop `traceloop.entity.output` = JSON `{result: content[0].text or content[0], is_error}`, each key only when
 * the result has it. Traceloop writes no output at all for `{content: []}` (no block, no `isError`): when it captures
 * content (`traceloop.entity.input` is there, as it is whenever the output would be) and the call did not fail, a
 * missing output is that result with no content, an empty one.
 */
function traceloopResult(a: Attributes, statusError: boolean): ResultSignals {
  const raw = readString(a, 'traceloop.entity.output');
  if (raw === null) {
    const capturing = readString(a, 'traceloop.entity.input') !== null;
    return { isError: null, empty: capturing && !statusError ? true : null, text: null };
  }
  const output = parseJson(raw);
  if (!isRecord(output)) return { isError: null, empty: null, text: null };
  const isError = typeof output['is_error'] === 'boolean' ? output['is_error'] : null;
  const result = output['result'];
  const text =
    typeof result === 'string'
      ? result
      : result === undefined || result === null
        ? null
        : JSON.stringify(result);
  return { isError, empty: isError === false && (text === null || text === '') ? true : null, text };
}

/** Sentry `mcp.tool.result.*`: is_error, content_count (0 → empty), content (text). */
function sentryResult(a: Attributes): ResultSignals {
  const contentCount = readInt(a, 'mcp.tool.result.content_count');
  return {
    isError: readBool(a, 'mcp.tool.result.is_error'),
    empty: contentCount === 0 ? true : null,
    text: readString(a, 'mcp.tool.result.content'),
  };
}

const NO_RESULT: ResultSignals = { isError: null, empty: null, text: null };

/**
 * The GenAI semantic conventions' opt-in `gen_ai.tool.call.result` (plain semconv spans): the tool's result, a JSON
 * string or a structured value. An MCP `CallToolResult` (`{content, isError}`) is read as Traceloop's output is: its
 * first block's text (else the block as JSON) is the text, and no block at all (and no `isError: true`) is empty.
 * Any other value is the result text: a JSON string's own text, else as sent (JSON for a structured value), which
 * the empty and failure detectors read as they read every result text.
 */
function semconvResult(a: Attributes): ResultSignals {
  const value = a['gen_ai.tool.call.result'];
  if (value === undefined || value === null) return NO_RESULT;
  const result = typeof value === 'string' ? (parseJson(value) ?? value) : value;
  if (!isRecord(result) || !Array.isArray(result['content'])) {
    const text =
      typeof result === 'string' ? result : typeof value === 'string' ? value : JSON.stringify(value);
    return { isError: null, empty: null, text };
  }
  const isError = typeof result['isError'] === 'boolean' ? result['isError'] : null;
  const [first] = result['content'] as unknown[];
  // A result may carry its data only in structuredContent (MCP: a text block SHOULD mirror it, need not): then it is
  // that JSON, not empty.
  const structured = result['structuredContent'];
  const text =
    first !== undefined
      ? isRecord(first) && typeof first['text'] === 'string'
        ? first['text']
        : JSON.stringify(first)
      : structured !== undefined && structured !== null
        ? (JSON.stringify(structured) ?? null)
        : null;
  return { isError, empty: text === null && isError !== true ? true : null, text };
}

/**
 * Arguments fingerprint: `errata.args.*` as sent; otherwise computed from raw arguments a vendor sent
 * (`gen_ai.tool.call.arguments`, Traceloop `traceloop.entity.input`, Sentry `mcp.request.argument.*`), which
 * are then dropped, unless the project stores arguments (`storedArguments`).
 */
function argsOf(a: Attributes): ToolCallData['args'] {
  const hash = readString(a, 'errata.args.hash');
  const size = readInt(a, 'errata.args.size');
  if (hash !== null) return { hash: hash.toLowerCase(), size };
  const raw = rawArguments(a);
  if (raw === undefined) return { hash: null, size };
  const fingerprint = argsFingerprint(raw);
  return { hash: fingerprint.hash, size: size ?? fingerprint.size };
}

/** The raw arguments as stored for a project that keeps them: the JSON sent, redacted and cut; null when none came. */
function storedArguments(a: Attributes, limit: number): string | null {
  const raw = rawArguments(a);
  if (raw === undefined) return null;
  return storedText(typeof raw === 'string' ? raw : (JSON.stringify(raw) ?? null), limit);
}

function rawArguments(a: Attributes): unknown {
  const semconv = a['gen_ai.tool.call.arguments'];
  if (typeof semconv === 'string') return parseJson(semconv) ?? semconv;
  if (semconv !== undefined && semconv !== null) return semconv;
  const input = parseJson(readString(a, 'traceloop.entity.input') ?? '');
  if (isRecord(input) && 'arguments' in input) return input['arguments'];
  const prefix = 'mcp.request.argument.';
  let sentry: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(a)) {
    if (!key.startsWith(prefix)) continue;
    sentry ??= {};
    sentry[key.slice(prefix.length)] = typeof value === 'string' ? (parseJson(value) ?? value) : value;
  }
  return sentry;
}

/** Sum of `gen_ai.usage.input_tokens` and `output_tokens`, null when neither is a count (a negative is none). */
function tokensOf(a: Attributes): number | null {
  const count = (key: string): number | null => {
    const n = readInt(a, key);
    return n !== null && n >= 0 ? n : null;
  };
  const input = count('gen_ai.usage.input_tokens');
  const output = count('gen_ai.usage.output_tokens');
  return input === null && output === null ? null : (input ?? 0) + (output ?? 0);
}

/** `errata.retry.of`: the retried call's span id, in lower case; a value that is no span id is no hint. */
function retryOf(a: Attributes): string | null {
  const value = readString(a, 'errata.retry.of')?.trim().toLowerCase() ?? null;
  return value !== null && SPAN_ID.test(value) ? value : null;
}

/**
 * MCP server identity: `errata.server.*` (serverInfo), else `mcp.server.*` (Sentry, and some SDKs), else — on
 * SERVER spans only, where the process is the MCP server — resource `service.name` / `service.version`. A
 * client span's resource describes the agent, never the server, so it is not a fallback there.
 */
function serverOf(span: SpanRecord): ToolCallData['server'] {
  const a = span.attributes;
  const isServer = span.kind === SpanKind.SERVER;
  const port = readInt(a, 'server.port');
  return {
    name: nameOf(
      readString(a, 'errata.server.name') ??
        readString(a, 'mcp.server.name') ??
        (isServer ? readString(span.resource, 'service.name') : null),
    ),
    version: nameOf(
      readString(a, 'errata.server.version') ??
        readString(a, 'mcp.server.version') ??
        (isServer ? readString(span.resource, 'service.version') : null),
    ),
    // A key of the reports when the server says no name (`serverLabel`): cut like a name, not redacted (a host's
    // digits are no secret, and redacting them made node-20261201 and node-20261202 one server); its user info is.
    address: nameOf(hostOf(readString(a, 'server.address'))),
    port: port !== null && port >= 0 && port <= 65535 ? port : null,
  };
}

/** A host never holds an `@`: whatever comes before one is user info (`user:password@host`), a credential. */
const hostOf = (address: string | null): string | null =>
  address === null ? null : address.slice(address.lastIndexOf('@') + 1);

/**
 * The result text Errata keeps (DOMAIN.md §5). What a producer sends as `errata.result.text` it sends by that
 * contract: Errata's SDK only for failures, empties and results that signal a failure, every result only when the
 * user opted in (`captureResults`), a hand-made exporter by its own choice. Traceloop and Sentry put every result on
 * their spans, a customer's record included, with nobody opting in, and a semconv `gen_ai.tool.call.result` is every
 * result once opted in: of theirs Errata keeps the text of a call that failed or came back empty, or whose text
 * signals a failure (the failure-as-empty detector the SDK runs before sending), and none of a plain success. The
 * detector reads the stored text, as the classification will.
 */
function keptResultText(
  outcome: Outcome,
  text: string | null,
  fromOtherInstrumentation: boolean,
): string | null {
  if (text === null || !fromOtherInstrumentation || outcome !== 'ok') return text;
  return failureSignalOf(null, text) !== null ? text : null;
}

/**
 * A plain exporter sends "No results found" or an empty list without saying the result is empty, as Errata's SDK
 * would: DOMAIN.md §5 has producers send `errata.result.empty`; without it (and an item count), ingest derives it.
 */
function resultSaysEmpty(text: string | null, structured: string | null, tool: string): boolean {
  return (text !== null && saysNoResults(text, tool)) || isEmptyListResult(structured, text);
}

function toolCall(
  span: SpanRecord,
  source: SpanSource,
  limit: number,
  storeArguments: boolean,
): ToolCallObserved {
  const a = span.attributes;
  const statusError = span.status.code === StatusCode.ERROR;
  const vendor =
    source === 'traceloop'
      ? traceloopResult(a, statusError)
      : source === 'sentry'
        ? sentryResult(a)
        : source === 'semconv'
          ? semconvResult(a)
          : NO_RESULT;
  const rawStatusMessage = span.status.message === '' ? null : span.status.message;
  const errorType = readString(a, 'error.type')?.trim() ?? null;

  let isError = readBool(a, 'errata.result.is_error') ?? vendor.isError;
  // Traceloop marks an isError result only with status ERROR (message = the result text). Without its output
  // attribute, an ERROR status that no code, timeout or network message explains is that isError result.
  if (
    source === 'traceloop' &&
    isError === null &&
    statusError &&
    !messageExplainsNoResult(rawStatusMessage)
  ) {
    isError = true;
  }

  const rpcStatusCode =
    readString(a, 'rpc.response.status_code') ??
    readString(a, 'rpc.status_code') ??
    readString(a, 'rpc.jsonrpc.error_code') ??
    (isError === null && integerCode(errorType) === null ? rpcCodeFromMessage(rawStatusMessage) : null);

  const empty = readBool(a, 'errata.result.empty') ?? vendor.empty;
  const itemCount = readInt(a, 'errata.result.item_count');
  const errataText = readString(a, 'errata.result.text');
  const resultText = errataText ?? vendor.text;
  const structured = readString(a, 'errata.result.structured');
  const tool = toolName(span);
  const outcome = deriveOutcome({
    errorType,
    rpcStatusCode,
    isError,
    empty: empty ?? (itemCount === null && resultSaysEmpty(resultText, structured, tool) ? true : null),
    itemCount,
    statusError,
    statusMessage: rawStatusMessage,
  });

  const retryAfterMs = readInt(a, 'errata.error.retry_after_ms');
  const attempt = readInt(a, 'errata.retry.attempt');
  return {
    type: 'ToolCallObserved',
    data: {
      span: spanRef(span),
      source,
      tool,
      server: serverOf(span),
      mcp: {
        sessionId: storedId(readString(a, 'mcp.session.id')),
        protocolVersion: storedShortText(readString(a, 'mcp.protocol.version')),
        requestId: storedId(
          readString(a, 'jsonrpc.request.id') ??
            readString(a, 'rpc.jsonrpc.request_id') ??
            readString(a, 'mcp.request.id'),
        ),
        transport: storedShortText(readString(a, 'network.transport') ?? readString(a, 'mcp.transport')),
      },
      outcome,
      // The outcome was read from the raw values; what the classifier reads later stays as it was (error types and
      // JSON-RPC codes are short, with no secret-shaped part), only a secret sent in them is replaced.
      errorType: storedShortText(errorType),
      rpcStatusCode: storedShortText(rpcStatusCode),
      httpStatusCode: readInt(a, 'http.response.status_code') ?? readInt(a, 'http.status_code'),
      statusMessage: storedText(rawStatusMessage, limit),
      result: {
        isError,
        empty,
        itemCount: itemCount !== null && itemCount >= 0 ? itemCount : null,
        text: keptResultText(outcome, storedText(resultText, limit), errataText === null),
        structured: storedText(structured, limit),
        textMirror: readBool(a, 'errata.result.text_mirror'),
      },
      // Redacted and cut like every text: what a server declares is third-party text too.
      declared: {
        category: storedText(readString(a, 'errata.error.category'), limit),
        retryable: readBool(a, 'errata.error.retryable'),
        code: storedText(readString(a, 'errata.error.code'), limit),
        retryAfterMs: retryAfterMs !== null && retryAfterMs >= 0 ? retryAfterMs : null,
      },
      args: argsOf(a),
      ...(storeArguments ? { arguments: storedArguments(a, limit) } : {}),
      retryHint: {
        of: retryOf(a),
        attempt: attempt !== null && attempt >= 0 ? attempt : null,
      },
      tokens: tokensOf(a),
    },
  };
}
