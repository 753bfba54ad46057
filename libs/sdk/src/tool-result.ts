/**
 * Outcome attributes of a `tools/call` result (DOMAIN.md §5), computed in the agent's process. Pure: a result
 * object in, attributes out; the result is only read. Texts leave the process redacted and truncated, and only
 * for errors, empty results and results that signal a failure — or for every result when capture is opted in.
 */
import type { Attributes } from '@opentelemetry/api';
import {
  canonicalJson,
  declaredErrorOf,
  failureSignalOf,
  isEmptyListPayload,
  isRecord,
  parseJson,
  saysNoResults,
  storedText,
  truncateUtf8,
} from '@errata/domain';
import {
  ATTR_ERRATA_ERROR_CATEGORY,
  ATTR_ERRATA_ERROR_CODE,
  ATTR_ERRATA_ERROR_RETRYABLE,
  ATTR_ERRATA_ERROR_RETRY_AFTER_MS,
  ATTR_ERRATA_RESULT_EMPTY,
  ATTR_ERRATA_RESULT_IS_ERROR,
  ATTR_ERRATA_RESULT_ITEM_COUNT,
  ATTR_ERRATA_RESULT_STRUCTURED,
  ATTR_ERRATA_RESULT_TEXT,
  ATTR_ERRATA_RESULT_TEXT_MIRROR,
  ATTR_ERROR_TYPE,
} from './semconv';

export interface ResultCaptureOptions {
  /** Send the text and structured content of every result, not only of failures and empties. */
  readonly captureResults: boolean;
  /** UTF-8 byte limit of each text sent. */
  readonly textLimitBytes: number;
}

/** What the attributes say about the call, for the span status. */
export interface ToolResultAttributes {
  readonly attributes: Attributes;
  readonly isError: boolean;
}

interface ContentSummary {
  /** Text blocks joined with newlines; null when there are none. */
  readonly text: string | null;
  /** Text blocks that are not blank, plus every non-text block (image, audio, resource, link). */
  readonly meaningfulBlocks: number;
  readonly singleText: string | null;
}

function summarizeContent(content: unknown): ContentSummary {
  if (!Array.isArray(content)) return { text: null, meaningfulBlocks: 0, singleText: null };
  const texts: string[] = [];
  let meaningfulBlocks = 0;
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (block['type'] === 'text' && typeof block['text'] === 'string') {
      texts.push(block['text']);
      if (block['text'].trim() !== '') meaningfulBlocks++;
    } else {
      meaningfulBlocks++;
    }
  }
  return {
    text: texts.length === 0 ? null : texts.join('\n'),
    meaningfulBlocks,
    singleText: texts.length === 1 && content.length === 1 ? (texts[0] ?? null) : null,
  };
}

const looksLikeJson = (text: string): boolean => {
  const first = text.trimStart()[0];
  return first === '{' || first === '[';
};

/** Items of a list payload: an array's length, or the length of the one array a wrapper object holds. */
function listItemCount(json: unknown): number | null {
  if (Array.isArray(json)) return json.length;
  if (!isRecord(json)) return null;
  const arrays: unknown[][] = [];
  for (const container of [json, json['data'], json['result']]) {
    if (!isRecord(container)) continue;
    for (const value of Object.values(container)) if (Array.isArray(value)) arrays.push(value);
  }
  return arrays.length === 1 ? (arrays[0]?.length ?? null) : null;
}

/** A text block carrying the same JSON as structuredContent: the model can see the structured result. */
function mirrorsStructured(content: unknown, structured: unknown): boolean {
  if (!Array.isArray(content)) return false;
  const expected = canonicalJson(structured);
  return content.some(
    (block) =>
      isRecord(block) &&
      block['type'] === 'text' &&
      typeof block['text'] === 'string' &&
      looksLikeJson(block['text']) &&
      canonicalJson(parseJson(block['text'])) === expected,
  );
}

export function toolResultAttributes(
  result: unknown,
  toolName: string,
  options: ResultCaptureOptions,
): ToolResultAttributes {
  const record = isRecord(result) ? result : {};
  const isError = record['isError'] === true;
  const structured = record['structuredContent'];
  const hasStructured = structured !== undefined && structured !== null;
  const content = summarizeContent(record['content']);
  const structuredJson = hasStructured ? (JSON.stringify(structured) ?? null) : null;

  const listJson = hasStructured
    ? structured
    : content.singleText !== null && looksLikeJson(content.singleText)
      ? parseJson(content.singleText)
      : undefined;
  const listCount = listItemCount(listJson);
  const nothing =
    (!hasStructured && content.meaningfulBlocks === 0) ||
    (listCount === null && content.singleText !== null && saysNoResults(content.singleText, toolName));
  const itemCount = listCount ?? (nothing ? 0 : null);
  const empty = !isError && (nothing || isEmptyListPayload(listJson));

  const limit = options.textLimitBytes;
  // The detector reads what the server would store: texts cut to the limit.
  const failureSignal =
    isError || empty
      ? null
      : failureSignalOf(
          structuredJson === null ? null : truncateUtf8(structuredJson, limit),
          content.text === null ? null : truncateUtf8(content.text, limit),
        );
  const failed = isError || failureSignal !== null;

  const attributes: Attributes = {
    [ATTR_ERRATA_RESULT_IS_ERROR]: isError,
    [ATTR_ERRATA_RESULT_EMPTY]: empty,
  };
  if (itemCount !== null) attributes[ATTR_ERRATA_RESULT_ITEM_COUNT] = itemCount;
  if (hasStructured)
    attributes[ATTR_ERRATA_RESULT_TEXT_MIRROR] = mirrorsStructured(record['content'], structured);
  if (isError) attributes[ATTR_ERROR_TYPE] = 'tool_error';

  if (failed || empty || options.captureResults) {
    const text = storedText(content.text, limit);
    const structuredText = storedText(structuredJson, limit);
    if (text !== null) attributes[ATTR_ERRATA_RESULT_TEXT] = text;
    if (structuredText !== null) attributes[ATTR_ERRATA_RESULT_STRUCTURED] = structuredText;
  }
  if (failed) {
    const declared = declaredErrorOf(structuredJson, content.text, record['_meta']);
    if (declared.category !== null) attributes[ATTR_ERRATA_ERROR_CATEGORY] = declared.category;
    if (declared.retryable !== null) attributes[ATTR_ERRATA_ERROR_RETRYABLE] = declared.retryable;
    if (declared.code !== null) attributes[ATTR_ERRATA_ERROR_CODE] = declared.code;
    if (declared.retryAfterMs !== null) attributes[ATTR_ERRATA_ERROR_RETRY_AFTER_MS] = declared.retryAfterMs;
  }
  return { attributes, isError };
}
