/**
 * Classification of one tool call under the versioned rules (DOMAIN.md §1, §3): category and its source,
 * retryability, and the two misclassification directions. Pure; reads only the ToolCallData.
 */
import { firstNonNull, isRecord } from './attributes';
import { FAILED_OUTCOMES, type ToolCallData } from './events';
import { integerCode, rpcCodeFromMessage } from './outcome';
import {
  declaredCategories,
  declaredCodes,
  declaresCustomerExplanation,
  declaredHttpStatuses,
  declaredRetryAfterMs,
  declaredRetryable,
  firstDeclared,
  humanStrings,
  firstInMetadata,
  metadataObjects,
  resultPayloads,
  type Payload,
} from './payload';
import {
  ACCESS_FAILURE_CATEGORIES,
  AUTHORIZATION_ERROR_TYPES,
  CATEGORY_SYNONYMS,
  DECLARED_AMBIGUOUS,
  EMPTY_CODE_ANY_TOOL,
  EMPTY_CODE_SEARCH_TOOL,
  EMPTY_TEXT_ANY_TOOL,
  EMPTY_TEXT_SEARCH_TOOL,
  FAILED_STATUS_VALUES,
  FAILURE_TEXT_RULES,
  HTTP_CODE_CATEGORIES,
  HTTP_STATUS_IN_TEXT,
  JSONRPC_CODE_CATEGORIES,
  MESSAGE_KEYS,
  RULES_VERSION,
  TEXT_PRECEDENCE,
  TEXT_RULES,
  UNKNOWN_TOOL_TEXT,
  type Category,
  type CategorySource,
  type FailureCategory,
} from './rules';
import { isSearchLikeTool } from './tool-names';
import { truncateUtf8, wasCut } from './redaction';

/**
 * Whether retrying can help: true / false, or `after_change` — only with changed arguments (validation).
 */
export type Retryability = boolean | 'after_change';

export interface Classification {
  readonly rulesVersion: number;
  /** Outcome is tool_error, protocol_error, timeout or transport_error. */
  readonly failed: boolean;
  /** Null for calls that did not fail (including failure-as-empty ones). */
  readonly category: FailureCategory | null;
  readonly source: CategorySource | null;
  /** The category the server declared, as received (also for values that map to nothing). */
  readonly declaredRaw: string | null;
  /** Null for calls that did not fail, and for unknown categories without a declaration. */
  readonly retryable: Retryability | null;
  readonly retryableSource: 'declared' | 'implied' | null;
  /** Declared retry-after (`errata.error.retry_after_ms`, or retryAfterMs / retry_after_seconds in the payload). */
  readonly retryAfterMs: number | null;
  /** isError for a valid empty result: failed, category `empty` (§3). */
  readonly emptyAsError: boolean;
  /** A hidden failure: outcome ok/ok_empty while the result says it failed (§3); not failed. */
  readonly failureAsEmpty: boolean;
  /** What decided: a rule id, a code, or the declared key and value (for samples and debugging). */
  readonly evidence: string | null;
  /** A failed call whose result carries a customer-facing explanation the agent could relay (seed 003). */
  readonly customerExplanation: boolean;
}

interface Decision {
  readonly category: FailureCategory;
  readonly source: CategorySource;
  readonly evidence: string;
}

/**
 * A text the span says mirrors the structured payload (`errata.result.text_mirror`), cut short at the size limit: no
 * longer JSON, its data would be read as a message (an observation "Login error: code 7" in a graph, a sample's
 * "Input validation error" as a hidden failure). The structured payload says all it said, and Errata's SDK leaves the
 * mirror out of its own verdict: read without it, the call is judged as the SDK judged it. A text that is not cut is
 * still read (it parses as the same JSON, or holds more than the mirror); a span without `text_mirror` (a plain
 * exporter's) is read as before.
 */
function isCutMirror(result: ToolCallData['result']): boolean {
  const { text, structured, textMirror } = result;
  if (textMirror !== true || structured === null || text === null || !wasCut(text)) return false;
  const first = text.trimStart()[0];
  return first === '{' || first === '[';
}

/** Normalized declared value: lowercased, `-` and spaces as `_`. */
const normalizeValue = (value: string): string =>
  value
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

/** A declared category value the rules understand (a canonical category, a synonym, or not_found / internal). */
export const isKnownDeclaredCategory = (value: string): boolean => {
  const v = normalizeValue(value);
  return (
    Object.hasOwn(CATEGORY_SYNONYMS, v) ||
    v === DECLARED_AMBIGUOUS.notFound ||
    v === DECLARED_AMBIGUOUS.internal
  );
};

export function classifyToolCall(call: ToolCallData): Classification {
  const payloads = resultPayloads(call.result.structured, isCutMirror(call.result) ? null : call.result.text);
  const rawCategories = [
    ...(call.declared.category === null ? [] : [call.declared.category]),
    ...payloads.flatMap(declaredCategories),
  ];
  // The first value the rules understand wins; an unknown spelling is still reported raw.
  const declaredRaw = rawCategories.find(isKnownDeclaredCategory) ?? rawCategories[0] ?? null;
  const retryAfterMs = call.declared.retryAfterMs ?? firstDeclared(payloads, declaredRetryAfterMs);

  if (!FAILED_OUTCOMES.includes(call.outcome)) {
    const hidden = failureAsEmptyEvidence(payloads);
    return {
      rulesVersion: RULES_VERSION,
      failed: false,
      category: null,
      source: null,
      declaredRaw,
      retryable: null,
      retryableSource: null,
      retryAfterMs: null,
      emptyAsError: false,
      failureAsEmpty: hidden !== null,
      evidence: hidden,
      customerExplanation: false,
    };
  }

  const decision = categorize(call, payloads, declaredRaw);
  const declaredRetry = call.declared.retryable ?? firstDeclared(payloads, declaredRetryable);
  const implied = impliedRetryability(decision.category);
  return {
    rulesVersion: RULES_VERSION,
    failed: true,
    category: decision.category,
    source: decision.source,
    declaredRaw,
    retryable: declaredRetry ?? implied,
    retryableSource: declaredRetry !== null ? 'declared' : implied !== null ? 'implied' : null,
    retryAfterMs,
    emptyAsError: decision.category === 'empty',
    failureAsEmpty: false,
    evidence: decision.evidence,
    customerExplanation: payloads.some(declaresCustomerExplanation),
  };
}

/**
 * Retryability implied by a category (§1): transient → true; validation → only after changing the
 * arguments; business, permission → false; empty (empty-as-error) → false, the same query finds nothing
 * again; unknown → null.
 */
export function impliedRetryability(category: FailureCategory): Retryability | null {
  switch (category) {
    case 'transient':
      return true;
    case 'validation':
      return 'after_change';
    case 'business':
    case 'permission':
    case 'empty':
      return false;
    case 'unknown':
      return null;
  }
}

/** Maps a declared value to its category; `not_found` depends on the tool and outcome (see categorize). */
export function mapDeclaredCategory(value: string): Category | typeof DECLARED_AMBIGUOUS.notFound | null {
  const v = normalizeValue(value);
  if (v === DECLARED_AMBIGUOUS.internal) return 'unknown';
  if (v === DECLARED_AMBIGUOUS.notFound) return DECLARED_AMBIGUOUS.notFound;
  // Own keys only: a server may declare "__proto__" or "constructor", which an object's prototype answers to.
  return Object.hasOwn(CATEGORY_SYNONYMS, v) ? (CATEGORY_SYNONYMS[v] ?? null) : null;
}

/**
 * The first source that yields a category (§1), with empty-as-error (§3) where it belongs: what the server declared
 * (a canonical category, `not_found`, a "no results" code) comes first; a status code the call or its payload
 * carries comes before what an empty list or a "no results" message suggests, so a 503 that also says "0 results" is
 * transient; a code only read in the message comes after (a search for "HTTP 503" that found nothing is empty).
 */
function categorize(call: ToolCallData, payloads: readonly Payload[], declaredRaw: string | null): Decision {
  const declared = declaredRaw === null ? null : mapDeclaredCategory(declaredRaw);
  if (declared !== null && declared !== DECLARED_AMBIGUOUS.notFound) {
    return { category: declared, source: 'declared', evidence: `declared:${declaredRaw}` };
  }
  const toolError = call.outcome === 'tool_error';
  const declaredNotFound = declared === DECLARED_AMBIGUOUS.notFound;
  if (toolError) {
    const empty = declaredEmptyEvidence(call, payloads, declaredNotFound);
    if (empty !== null) return { category: 'empty', ...empty };
  }
  if (declaredNotFound) {
    return { category: 'validation', source: 'declared', evidence: `declared:${declaredRaw}` };
  }
  const texts = [
    ...(call.statusMessage === null ? [] : [call.statusMessage]),
    ...payloads.flatMap((p) => humanStrings(p)),
  ];
  const byCode = codeDecision(call, payloads);
  if (byCode !== null) return byCode;
  if (toolError) {
    const empty = inferredEmptyEvidence(call, payloads);
    if (empty !== null) return { category: 'empty', ...empty };
  }
  return (
    codeInTexts(call, texts) ??
    textDecision(texts) ?? { category: 'unknown', source: 'none', evidence: 'none' }
  );
}

/**
 * `code` source, the first code the call or its payload carries that maps to a category: the JSON-RPC code (rpc
 * status, numeric error.type); the HTTP status of the exchange (`http.response.status_code`: an HTTP transport's 401
 * is a permission failure, not the transient one its transport_error outcome implies); an authorization failure
 * named by `error.type`; the code a timeout / transport outcome implies (the SDK's -32001 / -32000); a 3-digit
 * declared `errata.error.code`; `statusCode`/`status` in the payload; a JSON-RPC code declared as the error's code.
 */
function codeDecision(call: ToolCallData, payloads: readonly Payload[]): Decision | null {
  const byCarried = rpcCodeDecision(carriedRpcCode(call));
  if (byCarried !== null) return byCarried;
  const byExchange = httpStatusDecision(call.httpStatusCode);
  if (byExchange !== null) return byExchange;
  if (call.errorType !== null && AUTHORIZATION_ERROR_TYPES.has(call.errorType)) {
    return { category: 'permission', source: 'code', evidence: `error.type:${call.errorType}` };
  }
  const implied = call.outcome === 'timeout' ? -32001 : call.outcome === 'transport_error' ? -32000 : null;
  const byImplied = carriedRpcCode(call) === null ? rpcCodeDecision(implied) : null;
  if (byImplied !== null) return byImplied;
  const declaredCode = call.declared.code?.trim() ?? '';
  const statuses = [
    /^\d{3}$/.test(declaredCode) ? Number(declaredCode) : null,
    ...payloads.flatMap(declaredHttpStatuses),
  ];
  for (const status of statuses) {
    const decision = httpStatusDecision(status);
    if (decision !== null) return decision;
  }
  // A JSON-RPC code the result declares as its own (`"code": -32602` for arguments it refused), as a 3-digit one is read
  // as an HTTP status.
  for (const code of [declaredCode, ...payloads.flatMap(declaredCodes)]) {
    const decision = JSONRPC_CODE.test(code) ? rpcCodeDecision(Number(code)) : null;
    if (decision !== null) return decision;
  }
  return null;
}

const JSONRPC_CODE = /^-32\d{3}$/;

const carriedRpcCode = (call: ToolCallData): number | null =>
  integerCode(call.rpcStatusCode) ?? integerCode(call.errorType);

/**
 * `code` source, read in the messages: an `McpError` message (SDK 1.x servers turn errors such as an unknown tool
 * into isError results with "MCP error -32602: …"), when the call carries no JSON-RPC code; "status code 503" /
 * "HTTP 429".
 */
function codeInTexts(call: ToolCallData, texts: readonly string[]): Decision | null {
  if (carriedRpcCode(call) === null) {
    const byMessage = rpcCodeDecision(integerCode(firstNonNull(texts.map(rpcCodeFromMessage))));
    if (byMessage !== null) return byMessage;
  }
  for (const text of texts) {
    const status = HTTP_STATUS_IN_TEXT.exec(text)?.[1];
    const decision = status === undefined ? null : httpStatusDecision(Number(status));
    if (decision !== null) return decision;
  }
  return null;
}

function rpcCodeDecision(code: number | null): Decision | null {
  const category = code === null ? undefined : JSONRPC_CODE_CATEGORIES[String(code)];
  return category === undefined ? null : { category, source: 'code', evidence: `jsonrpc:${code}` };
}

function httpStatusDecision(status: number | null): Decision | null {
  const category = status === null ? undefined : HTTP_CODE_CATEGORIES[String(status)];
  return category === undefined ? null : { category, source: 'code', evidence: `http:${status}` };
}

/** The category DOMAIN.md §1's text rules read in these texts (TEXT_PRECEDENCE), or null. */
export const categoryOfTexts = (texts: readonly string[]): FailureCategory | null =>
  textDecision(texts)?.category ?? null;

/** `text` source: the first category in TEXT_PRECEDENCE with a matching rule. `_` reads as a space. */
function textDecision(texts: readonly string[]): Decision | null {
  const joined = texts.join('\n').replace(/_/g, ' ');
  if (joined.trim() === '') return null;
  for (const category of TEXT_PRECEDENCE) {
    for (const rule of TEXT_RULES) {
      if (rule.category === category && rule.pattern.test(joined)) {
        return { category, source: 'text', evidence: rule.id };
      }
    }
  }
  return null;
}

/** Bytes of a declared code that evidence keeps (`empty:code:…`). */
const MAX_EVIDENCE_CODE_BYTES = 128;

/**
 * Empty-as-error (§3) the server declared, for tool_error calls without a declared canonical category: `not_found`
 * on a search-like tool; a code NO_RESULTS / NO_MATCHES (any tool) or NOT_FOUND / NO_…_FOUND (search-like tools).
 */
function declaredEmptyEvidence(
  call: ToolCallData,
  payloads: readonly Payload[],
  declaredNotFound: boolean,
): Omit<Decision, 'category'> | null {
  const searchLike = isSearchLikeTool(call.tool);
  if (declaredNotFound && searchLike) return { source: 'declared', evidence: 'empty:declared_not_found' };
  const codes = [
    ...(call.declared.code === null ? [] : [call.declared.code]),
    ...payloads.flatMap(declaredCodes),
  ];
  for (const code of codes) {
    if (EMPTY_CODE_ANY_TOOL.test(code) || (searchLike && EMPTY_CODE_SEARCH_TOOL.test(code))) {
      // Evidence is a key of the finding rollups, indexed with the names: a declared code may be 2 KiB.
      return { source: 'declared', evidence: `empty:code:${truncateUtf8(code, MAX_EVIDENCE_CODE_BYTES)}` };
    }
  }
  return null;
}

/**
 * Empty-as-error (§3) read from the result, for tool_error calls that nothing declared or coded: a structured
 * payload that is an empty list; a message "no results" / "no matches" / "0 results" (any tool) or "not found" /
 * "no matching …" (search-like tools, not the SDK's "Tool x not found"). Not when the message, besides the query it
 * echoes, names an access failure (ACCESS_FAILURE_CATEGORIES) in its own words or by a status code: "timed out, no
 * results returned" and "HTTP 503: no results" are not valid empty results.
 */
function inferredEmptyEvidence(
  call: ToolCallData,
  payloads: readonly Payload[],
): Omit<Decision, 'category'> | null {
  const raw = [
    ...(call.statusMessage === null ? [] : [call.statusMessage]),
    ...payloads.flatMap((p) => messageStrings(p)),
  ];
  const messages = raw.map(ownWords);
  const searchLike = isSearchLikeTool(call.tool);
  // What the messages say besides the query they echo: in their own words, or as a status code ("HTTP 503: no
  // results"), a failure of the tool's own.
  const unechoed = raw.map((message) => withoutQueryEcho(message, searchLike));
  const named = [textDecision(unechoed.map(ownWords)), codeInTexts(call, unechoed)];
  if (named.some((decision) => decision !== null && ACCESS_FAILURE_CATEGORIES.has(decision.category)))
    return null;
  if (payloads.some((p) => isEmptyListPayload(p.json)))
    return { source: 'declared', evidence: 'empty:empty_list' };
  for (const text of messages) {
    if (EMPTY_TEXT_ANY_TOOL.test(text)) return { source: 'text', evidence: 'empty:text:no_results' };
    if (searchLike && EMPTY_TEXT_SEARCH_TOOL.test(text) && !UNKNOWN_TOOL_TEXT.test(text)) {
      return { source: 'text', evidence: 'empty:text:not_found' };
    }
  }
  return null;
}

/**
 * What a "no results" phrase is followed by when it echoes the query: " found for connection timeout", up to the end
 * of the clause or a clause that gives a reason ("… for invoices because the upstream timed out", "… - permission
 * denied").
 */
const QUERY_ECHO =
  /^(?:\s+(?:were |was )?(?:found|returned|matched|available))?\s+(?:for|matching|containing|about)\b(?:(?!\s+(?:because|due to|as|since|while|after|when|but)\b|\s*[-–—(])[^.;:,!?\n])*/i;

/**
 * A "no results" message without the query it echoes: a search for "connection timeout" or "permission denied" that
 * found nothing names no failure of its own ("No results found for rate limit" is empty, "timed out, no results" is
 * not).
 */
function withoutQueryEcho(message: string, searchLike: boolean): string {
  const phrase =
    EMPTY_TEXT_ANY_TOOL.exec(message) ?? (searchLike ? EMPTY_TEXT_SEARCH_TOOL.exec(message) : null);
  if (phrase === null) return message;
  const end = phrase.index + phrase[0].length;
  return message.slice(0, end) + message.slice(end).replace(QUERY_ECHO, '');
}

/**
 * Quoted and bracketed spans: an issue titled 'No results found', a log line "0 results returned", a file
 * matched (not found) are data about something else. A single quote counts only around words, not in "isn't".
 */
const QUOTED_SPANS = /"[^"\n]*"|“[^”\n]*”|`[^`\n]*`|\([^)\n]*\)|\[[^\]\n]*\]|(?<!\w)'[^'\n]*'(?!\w)/g;

/**
 * A message in its own words, its quoted and bracketed spans left out; the message as it is when it is all quoted
 * (`"No results found"`, `(no results)`, as some tools wrap their whole message).
 */
export function ownWords(message: string): string {
  const words = message.replace(QUOTED_SPANS, ' ');
  return words.trim() === '' ? message : words;
}

/** Keys a list result carries besides its lists: counts, paging, a message, a success flag. */
const LIST_METADATA_KEYS: ReadonlySet<string> = new Set([
  'message',
  'total',
  'count',
  'totalCount',
  'total_count',
  'resultCount',
  'result_count',
  'truncated',
  'isTruncated',
  'is_truncated',
  'nextCursor',
  'next_cursor',
  'cursor',
  'next',
  'page',
  'pageSize',
  'page_size',
  'limit',
  'offset',
  'hasMore',
  'has_more',
  'query',
  'ok',
  'success',
  'status',
]);

/**
 * Keys a success envelope carries as null (seed 000's `toolSuccess`: `{ok: true, data, error: null}`): metadata
 * only when null; any other value is not a list result's (an error object is a failure signal besides).
 */
const NULL_ON_SUCCESS_KEYS: ReadonlySet<string> = new Set(['error']);

/** Whether a key of a list result's container is list metadata rather than data. */
const isListMetadata = (key: string, value: unknown): boolean =>
  LIST_METADATA_KEYS.has(key) || (value === null && NULL_ON_SUCCESS_KEYS.has(key));

/**
 * The lists of a list-shaped payload: `[…]` itself, or the arrays of an object without failure signals (at the
 * top level or in `data` / `result`) whose other keys are list metadata (`total`, `nextCursor`, `message`,
 * `error: null`, …). Null for anything else: an order with an `items` array is data, not a list result.
 */
export function listPayloadArrays(json: unknown): unknown[][] | null {
  if (Array.isArray(json)) return [json];
  if (!isRecord(json) || failureSignal(json) !== null) return null;
  const arrays: unknown[][] = [];
  for (const container of [json, json['data'], json['result']]) {
    if (!isRecord(container)) continue;
    for (const key in container) {
      const value = container[key];
      if (Array.isArray(value)) arrays.push(value);
      else if (!isListMetadata(key, value) && !(container === json && (key === 'data' || key === 'result'))) {
        return null;
      }
    }
  }
  return arrays.length > 0 ? arrays : null;
}

/** An empty list: a list-shaped payload (`listPayloadArrays`) whose lists are all empty. */
export function isEmptyListPayload(json: unknown): boolean {
  return areEmptyLists(listPayloadArrays(json));
}

/** `isEmptyListPayload` for the lists `listPayloadArrays` found already. */
export const areEmptyLists = (lists: readonly unknown[][] | null): boolean =>
  lists !== null && lists.every((list) => list.length === 0);

const DECLARED_CATEGORY_SIGNAL_KEYS = ['errorCategory', 'error_category'] as const;

/** Structural failure signals of a payload object: ok:false, success:false, status error, an error object… */
function failureSignal(object: Record<string, unknown>): string | null {
  if (object['ok'] === false) return 'failure:ok_false';
  if (object['success'] === false) return 'failure:success_false';
  if (object['isError'] === true) return 'failure:is_error_in_payload';
  const status = object['status'];
  if (typeof status === 'string' && FAILED_STATUS_VALUES.has(status.trim().toLowerCase()))
    return 'failure:status';
  if (isRecord(object['error'])) return 'failure:error_object';
  const errors = object['errors'];
  if (Array.isArray(errors) && errors.length > 0) return 'failure:errors';
  for (const key of DECLARED_CATEGORY_SIGNAL_KEYS) {
    const value = object[key];
    if (typeof value === 'string' && mapDeclaredCategory(value) !== null) return 'failure:error_category';
  }
  return null;
}

/** The message-like strings of a payload: values of MESSAGE_KEYS, or the whole text when it is not JSON. */
function messageStrings(payload: Payload): string[] {
  if (payload.json === undefined) return [payload.raw];
  return metadataObjects(payload.json).flatMap((object) =>
    MESSAGE_KEYS.map((key) => object[key]).filter((v): v is string => typeof v === 'string'),
  );
}

/**
 * Failure-as-empty (§3) for ok / ok_empty calls: the structured payload (or JSON text) says it failed
 * (ok:false, success:false, status "error"/"failed", an `error` object, non-empty `errors`, a declared
 * errorCategory), or its message says so (FAILURE_TEXT_RULES). The subagent case ("No results found" from a
 * subagent whose own calls failed) needs the run and is left to projections.
 */
export function failureAsEmptyEvidence(payloads: readonly Payload[]): string | null {
  // Read in place, without listing objects or texts: this runs on every successful call in the SDK.
  for (const payload of payloads) {
    const signal = firstInMetadata(payload.json, failureSignal);
    if (signal !== null) return signal;
  }
  // messageStrings' texts in its order.
  for (const payload of payloads) {
    const rule =
      payload.json === undefined
        ? failureTextRule(payload.raw)
        : firstInMetadata(payload.json, messageFailureRule);
    if (rule !== null) return rule;
  }
  return null;
}

/** The failure text rule a message of the object (MESSAGE_KEYS, in order) matches first. */
function messageFailureRule(object: Record<string, unknown>): string | null {
  for (const key of MESSAGE_KEYS) {
    const value = object[key];
    const rule = typeof value === 'string' ? failureTextRule(value) : null;
    if (rule !== null) return rule;
  }
  return null;
}

/** The id of the first FAILURE_TEXT_RULES pattern the text matches. */
function failureTextRule(text: string): string | null {
  for (const rule of FAILURE_TEXT_RULES) if (rule.pattern.test(text)) return rule.id;
  return null;
}
