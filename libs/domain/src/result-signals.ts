/**
 * What an MCP client can tell from a tool result before anything leaves its process (DOMAIN.md §5): the error
 * fields the server declared, read with the same rules the classification uses, and whether a result that
 * claims success signals a failure (the failure-as-empty detector of §3, run locally so that such a result's
 * text is sent).
 */
import type { ToolCallData } from './events';
import { EMPTY_TEXT_ANY_TOOL, EMPTY_TEXT_SEARCH_TOOL, UNKNOWN_TOOL_TEXT } from './rules';
import { isSearchLikeTool } from './tool-names';
import { failureAsEmptyEvidence, isEmptyListPayload, isKnownDeclaredCategory, ownWords } from './classify';
import {
  declaredCategories,
  declaredCodes,
  declaredRetryable,
  declaredRetryAfterMs,
  firstDeclared,
  resultPayloads,
  type Payload,
} from './payload';

/** Error fields a result declares about itself, raw as received; null when absent. */
export interface DeclaredError {
  readonly category: string | null;
  readonly retryable: boolean | null;
  readonly code: string | null;
  readonly retryAfterMs: number | null;
}

/**
 * Declared error fields from a result's structured JSON, its text and its `_meta` object, in every spelling
 * the rules accept. A category the rules understand wins over an unknown one, as in the classification.
 */
export function declaredErrorOf(
  structured: string | null,
  text: string | null,
  meta?: unknown,
): DeclaredError {
  return declaredErrorInPayloads(resultPayloads(structured, text), meta);
}

/** `declaredErrorOf` for payloads a caller has parsed already. */
export function declaredErrorInPayloads(payloads: readonly Payload[], meta?: unknown): DeclaredError {
  const all =
    meta === undefined || meta === null ? payloads : [...payloads, { raw: '', json: { _meta: meta } }];
  const categories = all.flatMap(declaredCategories);
  return {
    category: categories.find(isKnownDeclaredCategory) ?? categories[0] ?? null,
    retryable: firstDeclared(all, declaredRetryable),
    code: firstDeclared(all, (payload) => declaredCodes(payload)[0] ?? null),
    retryAfterMs: firstDeclared(all, declaredRetryAfterMs),
  };
}

/**
 * The error fields a logged call declared about itself: its `errata.error.*` attributes (what the server or its SDK
 * stated), else what its structured content, its text or (for an SDK that sent them) its attributes' spellings say,
 * field by field, in the order the classification reads them.
 */
export function declaredErrorOfCall(call: Pick<ToolCallData, 'declared' | 'result'>): DeclaredError {
  const fromResult = declaredErrorOf(call.result.structured, call.result.text);
  return {
    category: call.declared.category ?? fromResult.category,
    retryable: call.declared.retryable ?? fromResult.retryable,
    code: call.declared.code ?? fromResult.code,
    retryAfterMs: call.declared.retryAfterMs ?? fromResult.retryAfterMs,
  };
}

/** The failure-as-empty evidence of a result that claims success (e.g. `failure:ok_false`), or null. */
export function failureSignalOf(structured: string | null, text: string | null): string | null {
  return failureAsEmptyEvidence(resultPayloads(structured, text));
}

/** Longest success message still read as a bare "nothing matched" rather than a result that mentions it. */
const MAX_NO_RESULTS_MESSAGE = 120;

/**
 * A short success message that only says nothing matched ("No matches found", "0 results"; "not found" or
 * "No matching …" on a search-like tool): a valid empty result (`ok_empty`), although it carries a text block. Only
 * the message's own words count, not what it quotes (`ownWords`).
 */
export function saysNoResults(text: string, toolName: string): boolean {
  const message = text.trim();
  if (message === '' || message.length > MAX_NO_RESULTS_MESSAGE || UNKNOWN_TOOL_TEXT.test(message))
    return false;
  const words = ownWords(message);
  return (
    EMPTY_TEXT_ANY_TOOL.test(words) || (isSearchLikeTool(toolName) && EMPTY_TEXT_SEARCH_TOOL.test(words))
  );
}

/**
 * A result whose payload is an empty list (`isEmptyListPayload`: seed 003's `{"orders": [], "message": …}`, seed
 * 000's `{ok: true, data: {tickets: [], …}, error: null}`): its structured JSON, else its text when that is JSON,
 * the payload Errata's SDK counts items in. A valid empty result (`ok_empty`) when it claims success.
 */
export function isEmptyListResult(structured: string | null, text: string | null): boolean {
  const [payload] = resultPayloads(structured, text);
  return payload !== undefined && isEmptyListPayload(payload.json);
}
