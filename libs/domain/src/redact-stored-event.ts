/**
 * A stored event's texts redacted again (`events redact`): texts are redacted as they are stored (normalize-span),
 * and a release whose redaction catches more does not rewrite what an older one stored. Pure.
 */
import { DEFAULT_TEXT_LIMIT_BYTES, MAX_NAME_BYTES } from './normalize-span';
import { redact, redactIdentifier, redactPayload, redactStoredText } from './redaction';

/**
 * How normalize-span stored a text: `text` through `storedText` (the text limit), `short` through it cut as a name
 * (error types, protocol versions), `id` as a session or request id (`redactIdentifier`, digits kept), `items` a list
 * of texts each through `redact` (a subagent report's `attempted` / `alternatives`).
 */
type StoredAs = 'text' | 'short' | 'id' | 'items';

/**
 * Every field normalize-span stores redacted, by event type. Names (tool, server, agent) and span ids are stored
 * unredacted (DOMAIN.md keys the reports by them) and stay as they are.
 */
const STORED_TEXTS: Readonly<Record<string, readonly (readonly [path: readonly string[], as: StoredAs])[]>> =
  {
    ToolCallObserved: [
      [['mcp', 'sessionId'], 'id'],
      [['mcp', 'requestId'], 'id'],
      [['mcp', 'protocolVersion'], 'short'],
      [['mcp', 'transport'], 'short'],
      [['errorType'], 'short'],
      [['rpcStatusCode'], 'short'],
      [['statusMessage'], 'text'],
      [['result', 'text'], 'text'],
      [['result', 'structured'], 'text'],
      [['declared', 'category'], 'text'],
      [['declared', 'code'], 'text'],
      [['arguments'], 'text'],
    ],
    AgentRunObserved: [[['conversationId'], 'id']],
    EscalationObserved: [[['reason'], 'text']],
    SubagentReportObserved: [
      [['attempted'], 'items'],
      [['alternatives'], 'items'],
      [['partialResults'], 'text'],
      [['category'], 'text'],
    ],
  };

export interface RedactStoredEventOptions {
  /** The text limit the texts were stored with (ERRATA_TEXT_LIMIT_BYTES); default 2048. */
  readonly textLimitBytes?: number;
}

export interface RedactedStoredEvent<Data> {
  /** The event's data with its texts redacted again: `data` itself when none changed. */
  readonly data: Data;
  /** How many of its texts changed (a list item counts as one). */
  readonly texts: number;
}

/**
 * A stored event's data (of `type`, as an older release may have stored it) with every text normalize-span stores
 * redacted by today's patterns, each cut back to the limit it was stored with where the new placeholders lengthen it
 * (`redactStoredText`). Idempotent; an unknown type, or a field that is not a text (a count, null, a field an older
 * release did not store), is left as it is.
 */
export function redactStoredEvent<Data>(
  type: string,
  data: Data,
  options: RedactStoredEventOptions = {},
): RedactedStoredEvent<Data> {
  const limit = options.textLimitBytes ?? DEFAULT_TEXT_LIMIT_BYTES;
  let out: unknown = data;
  let texts = 0;
  for (const [path, as] of STORED_TEXTS[type] ?? []) {
    const value = valueAt(out, path);
    const redacted = redactedValue(value, as, limit);
    if (redacted.texts === 0) continue;
    out = withValueAt(out, path, redacted.value);
    texts += redacted.texts;
  }
  return { data: out as Data, texts };
}

function redactedValue(value: unknown, as: StoredAs, limit: number): { value: unknown; texts: number } {
  if (as === 'items') {
    if (!Array.isArray(value)) return { value, texts: 0 };
    let texts = 0;
    const items = value.map((item: unknown) => {
      if (typeof item !== 'string') return item;
      const redacted = redactStoredText(item, limit, redact);
      if (redacted !== item) texts++;
      return redacted;
    });
    return { value: texts === 0 ? value : items, texts };
  }
  if (typeof value !== 'string') return { value, texts: 0 };
  const redacted =
    as === 'id'
      ? redactStoredText(value, MAX_NAME_BYTES, redactIdentifier)
      : redactStoredText(value, as === 'short' ? MAX_NAME_BYTES : limit, redactPayload);
  return { value: redacted, texts: redacted === value ? 0 : 1 };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function valueAt(data: unknown, path: readonly string[]): unknown {
  let at = data;
  for (const key of path) {
    if (!isObject(at)) return undefined;
    at = at[key];
  }
  return at;
}

/** A copy of `data` with `value` at `path` (which holds a value already); what is not on the path is shared. */
function withValueAt(data: unknown, path: readonly string[], value: unknown): unknown {
  if (path.length === 0 || !isObject(data)) return value;
  const [key, ...rest] = path as [string, ...string[]];
  return { ...data, [key]: withValueAt(data[key], rest, value) };
}

/** A finding as a webhook message holds it: its samples' texts are stored texts of the read models. */
export interface FindingWithSamples {
  readonly samples?: readonly { readonly text?: string | null }[];
}

/**
 * A finding of a webhook message already written (the outbox keeps its body for every attempt and a redelivery) with
 * its samples' texts redacted again as `redactStoredEvent` redacts the texts they came from; `finding` itself when
 * none changed.
 */
export function redactFindingSamples<Finding extends FindingWithSamples>(
  finding: Finding,
  options: RedactStoredEventOptions = {},
): RedactedStoredEvent<Finding> {
  if (!Array.isArray(finding.samples)) return { data: finding, texts: 0 };
  const limit = options.textLimitBytes ?? DEFAULT_TEXT_LIMIT_BYTES;
  let texts = 0;
  const samples = finding.samples.map((sample: unknown) => {
    if (!isObject(sample) || typeof sample['text'] !== 'string') return sample;
    const text = redactStoredText(sample['text'], limit);
    if (text === sample['text']) return sample;
    texts++;
    return { ...sample, text };
  });
  return { data: texts === 0 ? finding : { ...finding, samples }, texts };
}
