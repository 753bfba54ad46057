/**
 * What a tool result declares about its failure, read the way a contract-aware agent reads it: the category,
 * retryability, code and retry-after with Errata's own rules (`declaredErrorOf` / `mapDeclaredCategory` of
 * @errata/domain: every spelling the seeds use, in structuredContent, JSON text or `_meta`), plus the
 * human-facing fields the seeds' envelope carries.
 */
import { declaredErrorOf, isRecord, mapDeclaredCategory, parseJson } from '@errata/domain';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export type DeclaredCategory = 'transient' | 'validation' | 'business' | 'permission' | 'not_found';

export interface DeclaredError {
  readonly category: DeclaredCategory | null;
  readonly retryable: boolean | null;
  readonly retryAfterMs: number | null;
  readonly code: string | null;
  readonly description: string | null;
  readonly customerExplanation: string | null;
  readonly suggestedNextAction: string | null;
}

type Json = Record<string, unknown>;

/** The result's JSON payload: its structured content, or the JSON of its only text block. */
export function resultPayload(result: CallToolResult): Json | null {
  if (isRecord(result.structuredContent)) return result.structuredContent;
  const [block, ...rest] = result.content ?? [];
  if (rest.length > 0 || block?.type !== 'text') return null;
  const parsed = parseJson(block.text);
  return isRecord(parsed) ? parsed : null;
}

const textOf = (result: CallToolResult): string | null =>
  (result.content ?? []).flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n') || null;

function firstString(sources: readonly Json[], keys: readonly string[]): string | null {
  for (const source of sources) {
    for (const key of keys) {
      const value = source[key];
      if (typeof value === 'string' && value !== '') return value;
    }
  }
  return null;
}

export function declaredError(result: CallToolResult | null): DeclaredError {
  if (result === null) {
    return {
      category: null,
      retryable: null,
      retryAfterMs: null,
      code: null,
      description: null,
      customerExplanation: null,
      suggestedNextAction: null,
    };
  }
  const structured = result.structuredContent === undefined ? null : JSON.stringify(result.structuredContent);
  const declared = declaredErrorOf(structured, textOf(result), result._meta);
  const category = declared.category === null ? null : mapDeclaredCategory(declared.category);
  const payload = resultPayload(result);
  const sources =
    payload === null ? [] : isRecord(payload['error']) ? [payload, payload['error']] : [payload];
  return {
    category: category === 'unknown' ? null : category,
    retryable: declared.retryable,
    retryAfterMs: declared.retryAfterMs,
    code: declared.code,
    description: firstString(sources, ['description', 'message']),
    customerExplanation: firstString(sources, ['customerExplanation']),
    suggestedNextAction: firstString(sources, ['suggestedNextAction', 'suggested_action']),
  };
}
