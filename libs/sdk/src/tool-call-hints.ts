/**
 * Explicit retry hints and tool-call ids from the agent runtime (DOMAIN.md §5 `errata.retry.*`), carried in the
 * OpenTelemetry context to the next `tools/call`. Results and errors of instrumented calls are remembered in a
 * WeakMap, never marked, so a runtime can say "this retries that result" without touching the result object.
 */
import { context, createContextKey, diag } from '@opentelemetry/api';
import { nonNegativeInteger } from './non-negative-integer';
import type { ToolCallHints } from './types';
import { safeDiag } from './safe-diag';

interface PendingHints {
  readonly hints: ToolCallHints;
  /** Hints apply to the first tools/call started inside `withToolCall` only. */
  taken: boolean;
}

interface FinishedCall {
  readonly spanId: string;
  readonly attempt: number;
}

export interface ResolvedHints {
  readonly retryOf: string | null;
  readonly attempt: number | null;
  readonly toolCallId: string | null;
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
}

const HINTS_KEY = createContextKey('@errata/sdk tool call hints');
const SPAN_ID = /^[0-9a-f]{16}$/i;
const NO_HINTS: ResolvedHints = {
  retryOf: null,
  attempt: null,
  toolCallId: null,
  inputTokens: null,
  outputTokens: null,
};

/**
 * null: several calls ended with this object. The MCP SDK rejects every pending request with one McpError when the
 * connection closes, so that error names none of them.
 */
const finishedCalls = new WeakMap<object, FinishedCall | null>();

/** Runs `fn` with hints for the first tool call it starts. */
export function withToolCall<T>(hints: ToolCallHints, fn: () => T): T {
  if (typeof fn !== 'function')
    throw new TypeError('@errata/sdk: withToolCall(hints, fn) needs a function as fn');
  const pending: PendingHints = { hints, taken: false };
  return context.with(context.active().setValue(HINTS_KEY, pending), fn);
}

/** The span id of the instrumented tool call that returned this result or threw this error. */
export function toolCallSpanId(resultOrError: unknown): string | undefined {
  if (typeof resultOrError !== 'object' || resultOrError === null) return undefined;
  return finishedCalls.get(resultOrError)?.spanId;
}

export function rememberFinishedCall(resultOrError: unknown, spanId: string, attempt: number | null): void {
  if (typeof resultOrError !== 'object' || resultOrError === null) return;
  const earlier = finishedCalls.get(resultOrError);
  const call = earlier === undefined ? { spanId, attempt: attempt ?? 1 } : null;
  finishedCalls.set(resultOrError, call);
}

/** The hints waiting in the active context, taken so that later calls in the same callback do not reuse them. */
export function takeHints(): ResolvedHints {
  const pending = context.active().getValue(HINTS_KEY) as PendingHints | undefined;
  if (pending === undefined || pending.taken) return NO_HINTS;
  pending.taken = true;
  const { retryOf, attempt, toolCallId, inputTokens, outputTokens } = pending.hints;
  let previous: FinishedCall | undefined;
  let retryOfId: string | null = null;
  if (typeof retryOf === 'string') {
    if (SPAN_ID.test(retryOf)) retryOfId = retryOf.toLowerCase();
    else
      safeDiag(() =>
        diag.warn(`@errata/sdk: retryOf "${retryOf}" is not a 16-hex-digit span id; hint ignored`),
      );
  } else if (typeof retryOf === 'object' && retryOf !== null) {
    const finished = finishedCalls.get(retryOf);
    if (finished === undefined)
      safeDiag(() => diag.warn('@errata/sdk: retryOf is not a result or error of an instrumented call'));
    else if (finished === null)
      safeDiag(() =>
        diag.warn(
          '@errata/sdk: retryOf was the outcome of several calls (a closed connection); hint ignored',
        ),
      );
    previous = finished ?? undefined;
    retryOfId = previous?.spanId ?? null;
  } else if (retryOf !== undefined && retryOf !== null) {
    safeDiag(() =>
      diag.warn(`@errata/sdk: retryOf is a ${typeof retryOf}, not a span id, result or error; hint ignored`),
    );
  }
  const explicitAttempt = Number.isInteger(attempt) && (attempt as number) >= 1 ? (attempt as number) : null;
  return {
    retryOf: retryOfId,
    attempt: explicitAttempt ?? (previous === undefined ? null : previous.attempt + 1),
    toolCallId: typeof toolCallId === 'string' && toolCallId !== '' ? toolCallId : null,
    inputTokens: nonNegativeInteger(inputTokens),
    outputTokens: nonNegativeInteger(outputTokens),
  };
}
