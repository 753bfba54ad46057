/**
 * Error-contract findings on one call (DOMAIN.md §7): which rules a call violates, with the evidence. Pure;
 * run at projection time under the versioned rules, aggregated per (server, tool, rule) by the findings report.
 * `missing-propagation-context` concerns subagent reports, and the subagent case of failure-as-empty needs
 * the run: both are decided there.
 */
import type { Classification } from './classify';
import type { ToolCallData } from './events';
import { integerCode } from './outcome';
import { declaredCategories, declaredRetryable, toPayload } from './payload';
import { wasCut } from './redaction';
import {
  FINDING_RULES,
  LEAK_RULES,
  PROTOCOL_LEVEL_CODES,
  RAW_EXCEPTION,
  UNKNOWN_TOOL_TEXT,
  type FindingRule,
} from './rules';

export interface CallFinding {
  readonly rule: FindingRule;
  readonly evidence: string;
}

const NON_RETRYABLE_CATEGORIES: ReadonlySet<string> = new Set(['business', 'permission']);

/**
 * Error metadata the model cannot see: structured content the text does not mirror, or a declared category or
 * retryability the text does not carry (sent in `_meta`, which reaches no model). Each declared piece is looked for
 * in the text, which may declare it alone. A text cut short before showing it is no evidence: the rest may be past
 * the cut (a long description ahead of `errorCategory`, in a mirror the SDK checked whole).
 */
function invisibleMetadata(call: ToolCallData, classification: Classification): string | null {
  if (call.outcome !== 'tool_error') return null;
  if (call.result.structured !== null && call.result.textMirror === false) return 'structured:not_mirrored';
  const declaresCategory = classification.declaredRaw !== null;
  const declaresRetryable = classification.retryableSource === 'declared';
  if ((!declaresCategory && !declaresRetryable) || call.result.text === null) return null;
  const text = toPayload(call.result.text);
  const shown =
    text !== null &&
    (!declaresCategory || declaredCategories(text).length > 0) &&
    (!declaresRetryable || declaredRetryable(text) !== null);
  return shown || wasCut(call.result.text) ? null : 'metadata:not_in_text';
}

function wrongChannel(call: ToolCallData): string | null {
  if (call.outcome !== 'protocol_error') return null;
  const code = integerCode(call.rpcStatusCode) ?? integerCode(call.errorType);
  if (code === null || PROTOCOL_LEVEL_CODES.has(code)) return null;
  if (call.statusMessage !== null && UNKNOWN_TOOL_TEXT.test(call.statusMessage)) return null;
  return `jsonrpc:${code}`;
}

function leak(call: ToolCallData, classification: Classification): string | null {
  if (!classification.failed && !classification.failureAsEmpty) return null;
  const texts = [call.result.text, call.result.structured, call.statusMessage].filter(
    (t): t is string => t !== null,
  );
  for (const rule of LEAK_RULES) if (texts.some((text) => rule.pattern.test(text))) return rule.id;
  return null;
}

/**
 * A call without a result is charged only for the JSON-RPC error the server answered with: a timeout, a
 * cancellation or a dropped connection has a status message the client wrote ("AbortError: …"), not the server.
 */
function rawException(call: ToolCallData, classification: Classification): string | null {
  if (!classification.failed || call.result.structured !== null) return null;
  const serverMessage = call.outcome === 'protocol_error' ? call.statusMessage : null;
  const text = call.result.text ?? (call.result.isError === null ? serverMessage : null);
  return text !== null && RAW_EXCEPTION.test(text) ? 'raw_exception' : null;
}

/** The findings of one call, in FINDING_RULES order. */
export function detectCallFindings(call: ToolCallData, classification: Classification): CallFinding[] {
  const found: Partial<Record<FindingRule, string | null>> = {
    'untyped-error':
      call.outcome === 'tool_error' && !classification.emptyAsError && classification.source !== 'declared'
        ? `source:${classification.source ?? 'none'}`
        : null,
    'empty-as-error': classification.emptyAsError ? (classification.evidence ?? 'empty') : null,
    'failure-as-empty': classification.failureAsEmpty ? (classification.evidence ?? 'failure') : null,
    'invisible-metadata': invisibleMetadata(call, classification),
    'retryable-mismatch':
      classification.retryableSource === 'declared' &&
      classification.retryable === true &&
      classification.category !== null &&
      NON_RETRYABLE_CATEGORIES.has(classification.category)
        ? `declared_retryable:${classification.category}`
        : null,
    'wrong-channel': wrongChannel(call),
    'leaky-error': leak(call, classification),
    'raw-exception': rawException(call, classification),
  };
  return FINDING_RULES.flatMap((rule) => {
    const evidence = found[rule];
    return evidence === undefined || evidence === null ? [] : [{ rule, evidence }];
  });
}
