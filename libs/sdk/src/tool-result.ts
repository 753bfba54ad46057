/**
 * Outcome attributes of a `tools/call` result (DOMAIN.md §5), computed in the agent's process. Pure: a result
 * object in, attributes out; the result is only read. Texts leave the process redacted and truncated, and only
 * for errors, empty results and results that signal a failure — or for every result when capture is opted in.
 */
import type { Attributes } from '@opentelemetry/api';
import {
  areEmptyLists,
  canonicalJson,
  declaredErrorInPayloads,
  failureAsEmptyEvidence,
  fitJson,
  fitsUtf8Bytes,
  isRecord,
  listPayloadArrays,
  parseJson,
  redactJson,
  saysNoResults,
  storedText,
  truncateUtf8,
  type Payload,
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
  ERROR_TYPE_TOOL_ERROR,
} from './semconv';

export interface ResultCaptureOptions {
  /** Send the text and structured content of every result, not only of failures and empties. */
  readonly captureResults: boolean;
  /** UTF-8 byte limit of each text sent. */
  readonly textLimitBytes: number;
}

interface ContentSummary {
  /** Text blocks joined with newlines; null when there are none. */
  readonly text: string | null;
  /** Each text block. */
  readonly texts: readonly string[];
  /** Text blocks that are not blank, plus every non-text block (image, audio, resource, link). */
  readonly meaningfulBlocks: number;
  readonly singleText: string | null;
}

/** What `text.trim() !== ''` says, without copying the text. */
const NOT_BLANK = /\S/;

function summarizeContent(content: unknown): ContentSummary {
  if (!Array.isArray(content)) return { text: null, texts: [], meaningfulBlocks: 0, singleText: null };
  const texts: string[] = [];
  let meaningfulBlocks = 0;
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (block['type'] === 'text' && typeof block['text'] === 'string') {
      texts.push(block['text']);
      if (NOT_BLANK.test(block['text'])) meaningfulBlocks++;
    } else {
      meaningfulBlocks++;
    }
  }
  return {
    text: texts.length === 0 ? null : texts.join('\n'),
    texts,
    meaningfulBlocks,
    singleText: texts.length === 1 && content.length === 1 ? (texts[0] ?? null) : null,
  };
}

const looksLikeJson = (text: string): boolean => {
  const first = text.trimStart()[0];
  return first === '{' || first === '[';
};

/** Items of a list result: the length of its one list (several lists: unknowable). */
const listItemCount = (lists: readonly unknown[][] | null): number | null =>
  lists !== null && lists.length === 1 ? (lists[0]?.length ?? null) : null;

/** A text as Errata would store it, cut to the limit; its JSON only when the whole text fits (as on the server). */
function payloadOf(raw: string, json: unknown, limit: number): Payload {
  if (fitsUtf8Bytes(raw, limit)) return { raw, json };
  return { raw: truncateUtf8(raw, limit), json: undefined };
}

/**
 * Results are read in one pass, each JSON text parsed at most once: this runs on every call of the agent
 * (bench/sdk.bench.mjs). A text block mirrors structuredContent when it holds the same JSON: the same
 * serialization, or the same value once parsed (pretty-printed, or keys in another order).
 */
export function toolResultAttributes(
  result: unknown,
  toolName: string,
  options: ResultCaptureOptions,
): Attributes {
  const record = isRecord(result) ? result : {};
  const isError = record['isError'] === true;
  const structured = record['structuredContent'];
  const hasStructured = structured !== undefined && structured !== null;
  const content = summarizeContent(record['content']);
  const structuredJson = hasStructured ? (JSON.stringify(structured) ?? null) : null;
  const limit = options.textLimitBytes;

  // The single text block's JSON, parsed once; whether a text block mirrors the structured content.
  let textJson: unknown = undefined;
  if (
    content.singleText !== null &&
    content.singleText !== structuredJson &&
    looksLikeJson(content.singleText)
  ) {
    textJson = parseJson(content.singleText);
  }
  let mirrored = false;
  if (structuredJson !== null) {
    // Written once, when a text needs it: a result with a JSON text block per item would write it per block.
    let canonicalStructured: string | null = null;
    for (const text of content.texts) {
      if (text === structuredJson) mirrored = true;
      else if (looksLikeJson(text)) {
        const parsed: unknown = text === content.singleText ? textJson : parseJson(text);
        mirrored =
          JSON.stringify(parsed) === structuredJson ||
          canonicalJson(parsed) === (canonicalStructured ??= canonicalJson(structured));
      }
      if (mirrored) break;
    }
  }

  // `{ content: "<the text>" }` (server-filesystem's structuredContent) only wraps the text: read the text.
  const readsAsText = !hasStructured || wrapsText(structured, content.text);
  const lists = listPayloadArrays(readsAsText ? textJson : structured);
  const listCount = listItemCount(lists);
  const nothing =
    (readsAsText && content.meaningfulBlocks === 0) ||
    (listCount === null && content.singleText !== null && saysNoResults(content.singleText, toolName));
  const emptyLists = areEmptyLists(lists);
  // Several lists, all empty (`{"entities":[],"relations":[]}`): no items, though which list counts is unknowable.
  const itemCount = listCount ?? (nothing || emptyLists ? 0 : null);
  const empty = !isError && (nothing || emptyLists);

  // What the server will read: the structured JSON and the text, unless the text only repeats it.
  // Structured content over the limit is sent shrunk, as JSON that still parses (its keys kept): `ok: false` or an
  // `error` beside megabytes of rows still says the call failed, here and on the server.
  // Redacted before it is shortened: a secret cut in its middle would no longer be recognised.
  const fittedStructured =
    structuredJson !== null && !fitsUtf8Bytes(structuredJson, limit)
      ? fitJson(structured, limit, redactJson)
      : null;
  const payloads: Payload[] = [];
  if (structuredJson !== null) {
    payloads.push(
      fittedStructured === null
        ? payloadOf(structuredJson, structured, limit)
        : { raw: fittedStructured.text, json: fittedStructured.value },
    );
  }
  const textPayload = mirrored && content.singleText !== null ? null : content.text;
  const textPayloadJson =
    textPayload !== null && content.singleText === null ? parseJsonText(textPayload) : textJson;
  // A JSON text over the limit likewise (most servers send their JSON only as text).
  const fittedText =
    textPayload !== null && !fitsUtf8Bytes(textPayload, limit)
      ? fitJson(textPayloadJson, limit, redactJson)
      : null;
  if (textPayload !== null) {
    payloads.push(
      fittedText === null
        ? payloadOf(textPayload, textPayloadJson, limit)
        : { raw: fittedText.text, json: fittedText.value },
    );
  }
  const failureSignal = isError || empty ? null : failureAsEmptyEvidence(payloads);
  const failed = isError || failureSignal !== null;

  const attributes: Attributes = {
    [ATTR_ERRATA_RESULT_IS_ERROR]: isError,
    [ATTR_ERRATA_RESULT_EMPTY]: empty,
  };
  if (itemCount !== null) attributes[ATTR_ERRATA_RESULT_ITEM_COUNT] = itemCount;
  if (hasStructured) attributes[ATTR_ERRATA_RESULT_TEXT_MIRROR] = mirrored;
  if (isError) attributes[ATTR_ERROR_TYPE] = ERROR_TYPE_TOOL_ERROR;

  if (failed || empty || options.captureResults) {
    const text = fittedText?.text ?? storedText(content.text, limit);
    // The shrunk JSON is redacted already, and fits.
    const structuredText = fittedStructured?.text ?? storedText(structuredJson, limit);
    if (text !== null) attributes[ATTR_ERRATA_RESULT_TEXT] = text;
    if (structuredText !== null) attributes[ATTR_ERRATA_RESULT_STRUCTURED] = structuredText;
  }
  if (failed) {
    // Sent as attributes of their own, so read from the whole result, not the part the server gets: a field after
    // the first 2 KiB of a JSON text still counts. The result object too, `_meta` included: seed 000 writes
    // `errorCategory` / `isRetryable` on the result itself, beside `content` or instead of it.
    const whole: Payload[] = [];
    if (structuredJson !== null) whole.push({ raw: structuredJson, json: structured });
    if (textPayload !== null) whole.push({ raw: textPayload, json: textPayloadJson });
    whole.push({ raw: '', json: record });
    const declared = declaredErrorInPayloads(whole);
    // Texts like any other: a `code` key may hold anything (a tool's source code, a token, megabytes).
    const category = storedText(declared.category, limit);
    const code = storedText(declared.code, limit);
    if (category !== null) attributes[ATTR_ERRATA_ERROR_CATEGORY] = category;
    if (declared.retryable !== null) attributes[ATTR_ERRATA_ERROR_RETRYABLE] = declared.retryable;
    if (code !== null) attributes[ATTR_ERRATA_ERROR_CODE] = code;
    if (declared.retryAfterMs !== null) attributes[ATTR_ERRATA_ERROR_RETRY_AFTER_MS] = declared.retryAfterMs;
  }
  return attributes;
}

/** structuredContent whose one key, `content`, holds the result's text as it is. */
function wrapsText(structured: unknown, text: string | null): boolean {
  if (!isRecord(structured) || structured['content'] !== (text ?? '')) return false;
  for (const key in structured) if (key !== 'content') return false;
  return true;
}

/** Several text blocks joined: JSON only when the whole join is. */
const parseJsonText = (text: string): unknown => (looksLikeJson(text) ? parseJson(text) : undefined);
