import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import type { ErrataEvent, ToolCallData } from './events';
import { errataToolSpan, makeSpan, sid, type McpResult } from './fixtures.spec-helper';
import { normalizeSpan } from './normalize-span';
import { redactFindingSamples, redactStoredEvent } from './redact-stored-event';
import { REDACTED_TEXTS, UNTOUCHED_TEXTS } from './redaction-cases.spec-helper';
import { redactStoredText, storedText, truncateUtf8, utf8ByteLength } from './redaction';
import { SEED_EXAMPLES } from './seed-examples.spec-helper';
import { SpanKind, StatusCode } from './span';

/** The audit's texts, as a release without Errata's own key pattern and the Cookie header rule stored them. */
const ERRATA_KEY_TEXT = 'upstream refused key errata_ingest_AbCdEfGhIjKlMnOpQrStUvWxYz012345 (unauthorized)';
const ERRATA_KEY_REDACTED = 'upstream refused key [REDACTED:api_key] (unauthorized)';
const OLD_COOKIE_TEXT = 'Cookie: session=abc123def; csrftoken=[REDACTED:secret]';

const normalized = (span: Parameters<typeof normalizeSpan>[0], textLimitBytes = 2048): ErrataEvent => {
  const event = normalizeSpan(span, { textLimitBytes, storeArguments: true });
  if (event === null) throw new Error(`${span.name} is no event`);
  return event;
};

/** A tool call as ingest stores it now, with `changes` made to its data as an older release had stored them. */
function storedToolCall(changes: (data: ToolCallData) => ToolCallData = (data) => data): ToolCallData {
  const event = normalized(
    errataToolSpan('lookup_order', { isError: true, content: [{ type: 'text', text: 'Order not found' }] }),
  );
  return changes(event.data as ToolCallData);
}

/** Every string in `value` equal to `from` replaced by `to` (a stored event as an older release had it). */
function replaceStrings(value: unknown, from: string, to: string): unknown {
  if (value === from) return to;
  if (Array.isArray(value)) return value.map((item) => replaceStrings(item, from, to));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceStrings(v, from, to)]));
  return value;
}

const countStrings = (value: unknown, wanted: string): number =>
  value === wanted
    ? 1
    : typeof value === 'object' && value !== null
      ? Object.values(value).reduce<number>((sum, inner) => sum + countStrings(inner, wanted), 0)
      : 0;

describe('redactStoredEvent', () => {
  it('given a tool call an older release stored with an Errata key and a Cookie header, then both are redacted as ingest redacts them now', () => {
    // Given a tool call stored before Errata's keys and Cookie headers were caught
    const old = storedToolCall((data) => ({
      ...data,
      statusMessage: OLD_COOKIE_TEXT,
      result: { ...data.result, text: ERRATA_KEY_TEXT },
    }));
    // When its texts are redacted again
    const { data, texts } = redactStoredEvent('ToolCallObserved', old);
    // Then they read as the same texts ingested now
    expect(data.result.text).toBe(ERRATA_KEY_REDACTED);
    expect(data.statusMessage).toBe('Cookie: [REDACTED:secret]');
    expect(data.result.text).toBe(storedText(ERRATA_KEY_TEXT, 2048));
    expect(texts).toBe(2);
    // and nothing else of it changed, the event given included
    expect({ ...data, statusMessage: null, result: { ...data.result, text: null } }).toEqual({
      ...old,
      statusMessage: null,
      result: { ...old.result, text: null },
    });
    expect(old.result.text).toBe(ERRATA_KEY_TEXT);
  });

  it('given an event stored redacted already, then it is returned as it is (the same object)', () => {
    const data = storedToolCall();
    expect(redactStoredEvent('ToolCallObserved', data)).toEqual({ data, texts: 0 });
    expect(redactStoredEvent('ToolCallObserved', data).data).toBe(data);
  });

  it('covers every text normalize-span stores redacted, of every event type, and leaves names as they are', () => {
    // Given spans with the secret in every text attribute normalize-span reads (names included)
    const raw = ERRATA_KEY_TEXT;
    const spans = [
      makeSpan({
        name: 'tools/call lookup',
        spanId: sid(1),
        status: { code: StatusCode.ERROR, message: raw },
        attributes: {
          'mcp.method.name': 'tools/call',
          'gen_ai.tool.name': raw,
          'errata.server.name': raw,
          'errata.server.version': raw,
          'mcp.session.id': raw,
          'mcp.protocol.version': raw,
          'jsonrpc.request.id': raw,
          'network.transport': raw,
          'error.type': raw,
          'rpc.response.status_code': raw,
          'errata.result.is_error': true,
          'errata.result.text': raw,
          'errata.result.structured': raw,
          'errata.error.category': raw,
          'errata.error.code': raw,
          'gen_ai.tool.call.arguments': raw,
        },
      }),
      makeSpan({
        name: 'invoke_agent',
        kind: SpanKind.INTERNAL,
        spanId: sid(2),
        attributes: { 'gen_ai.agent.name': raw, 'gen_ai.agent.id': raw, 'gen_ai.conversation.id': raw },
      }),
      makeSpan({
        name: 'errata.escalation',
        spanId: sid(3),
        attributes: { 'errata.escalation.target': 'human', 'errata.escalation.reason': raw },
      }),
      makeSpan({
        name: 'errata.subagent_report',
        spanId: sid(4),
        attributes: {
          'errata.subagent.status': 'partial',
          'errata.subagent.attempted': [raw, 'search'],
          'errata.subagent.alternatives': [raw],
          'errata.subagent.partial_results': raw,
          'errata.error.category': raw,
        },
      }),
    ];
    const expected = {
      ToolCallObserved: 12,
      AgentRunObserved: 1,
      EscalationObserved: 1,
      SubagentReportObserved: 4,
    };
    for (const span of spans) {
      const now = normalized(span);
      // (every text that ingest redacts holds the placeholder now)
      const redactedTexts = countStrings(now.data, ERRATA_KEY_REDACTED);
      expect(redactedTexts).toBe(expected[now.type]);
      // When the event an older release stored (the secret in each of those texts) is redacted again
      const old = replaceStrings(now.data, ERRATA_KEY_REDACTED, raw);
      const again = redactStoredEvent(now.type, old);
      // Then it is the event ingest stores now: every text redacted, every name kept
      expect(again.data).toEqual(now.data);
      expect(again.texts).toBe(redactedTexts);
    }
  });

  it('is idempotent, and changes nothing ingest stores now, over the seed examples and the redaction cases', () => {
    const events: { type: string; data: unknown }[] = SEED_EXAMPLES.map((example) =>
      normalized(
        errataToolSpan(example.tool, example.result as McpResult, {
          attributes: {
            'errata.error.category': example.declared.category,
            'errata.error.retryable': example.declared.retryable,
            'errata.error.code': example.declared.code,
          },
        }),
      ),
    );
    for (const text of [...REDACTED_TEXTS.map(([, input]) => input), ...UNTOUCHED_TEXTS]) {
      const stored = storedToolCall((data) => ({
        ...data,
        statusMessage: storedText(text, 2048),
        result: { ...data.result, text: storedText(text, 2048), structured: storedText(text, 64) },
        declared: { ...data.declared, code: storedText(text, 2048) },
      }));
      events.push({ type: 'ToolCallObserved', data: stored });
      // (an older release's: the raw text stored)
      const old = { ...stored, statusMessage: text, result: { ...stored.result, text } };
      const once = redactStoredEvent('ToolCallObserved', old).data;
      expect(redactStoredEvent('ToolCallObserved', once).data).toBe(once);
    }
    for (const { type, data } of events) expect(redactStoredEvent(type, data)).toEqual({ data, texts: 0 });
  });

  it('leaves an unknown type, and fields an older release did not store, as they are', () => {
    const other = { text: ERRATA_KEY_TEXT };
    expect(redactStoredEvent('SomethingObserved', other).data).toBe(other);
    const { arguments: _arguments, ...withoutArguments } = storedToolCall();
    const partial = { ...withoutArguments, declared: undefined, result: { text: ERRATA_KEY_TEXT } };
    const again = redactStoredEvent('ToolCallObserved', partial);
    expect(again.data).toEqual({ ...partial, result: { text: ERRATA_KEY_REDACTED } });
    expect('arguments' in again.data).toBe(false);
  });
});

describe('redactStoredText', () => {
  it('given a text cut at the limit whose new placeholders lengthen it, then it is cut again to the limit, its marker counting every byte dropped', () => {
    // Given a text an older release cut at 256 bytes, holding short secrets that a placeholder outgrows
    const original = 'reach a@b.co '.repeat(40);
    const stored = truncateUtf8(original, 256);
    // When redacted again
    const again = redactStoredText(stored, 256);
    // Then it fits the limit, is cut clear of any placeholder, and its marker counts the bytes the original lost
    expect(utf8ByteLength(again)).toBeLessThanOrEqual(256);
    expect(again).toMatch(/^(reach \[REDACTED:email\] )+[a-z ]*…\[truncated \d+ bytes\]$/);
    const kept = again.slice(0, again.indexOf('…'));
    const dropped = Number(/(\d+) bytes\]$/.exec(again)![1]);
    expect(dropped).toBeGreaterThan(Number(/(\d+) bytes\]$/.exec(stored)![1]));
    expect(kept).not.toContain('@');
    expect(redactStoredText(again, 256)).toBe(again);
    // And a text that was not cut is cut once it outgrows the limit, as storedText cuts
    const short = 'reach a@b.co '.repeat(15);
    expect(redactStoredText(short, 256)).toBe(storedText(short, 256));
  });

  it('keeps a text stored under a larger limit whole, unless it outgrows its own length', () => {
    const text = `${'x'.repeat(500)} errata_ingest_AbCdEfGhIjKlMnOpQrStUvWxYz012345`;
    expect(redactStoredText(text, 256)).toBe(`${'x'.repeat(500)} [REDACTED:api_key]`);
  });

  it('keeps the marker of a cut text as it was: its count is not a number to redact', () => {
    const stored = `token errata_ingest_AbCdEfGhIjKlMnOpQrStUvWxYz012345…[truncated 123456789 bytes]`;
    expect(redactStoredText(stored, 2048)).toBe('token [REDACTED:api_key]…[truncated 123456789 bytes]');
  });

  it('never lengthens a text past the limit or its own length, and is idempotent (any text, any limit)', () => {
    const fragment = fc.constantFrom(
      'a@b.co',
      'Cookie: sid=1; x=y\n',
      'errata_read_AbCdEfGhIjKlMnOpQrStUvWxYz0',
      'password=hunter2 ',
      '{"api_key":"abc", "n": 12345678}',
      'Bearer abcdefgh12345 ',
      '12345678901',
      'é😀',
      '[REDACTED:secret]',
      '…[truncated 12 bytes]',
      ' ',
      'plain words ',
    );
    fc.assert(
      fc.property(
        fc.array(fragment, { maxLength: 60 }),
        fc.integer({ min: 64, max: 400 }),
        (parts, limit) => {
          // An older release's stored text: cut, not redacted
          const stored = truncateUtf8(parts.join(''), limit);
          const once = redactStoredText(stored, limit);
          expect(utf8ByteLength(once)).toBeLessThanOrEqual(Math.max(limit, utf8ByteLength(stored)));
          expect(redactStoredText(once, limit)).toBe(once);
        },
      ),
      { numRuns: 2000 },
    );
    // and JSON (structured content), parsed and written again when whole
    const json = fc.dictionary(
      fc.constantFrom('api_key', 'password', 'note', 'n', 'email', 'max_tokens', 'Cookie'),
      fc.oneof(fragment, fc.integer(), fc.array(fragment, { maxLength: 3 }), fc.constant(null)),
    );
    fc.assert(
      fc.property(json, fc.integer({ min: 64, max: 400 }), (value, limit) => {
        const stored = truncateUtf8(JSON.stringify(value), limit);
        const once = redactStoredText(stored, limit);
        expect(utf8ByteLength(once)).toBeLessThanOrEqual(Math.max(limit, utf8ByteLength(stored)));
        expect(redactStoredText(once, limit)).toBe(once);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('redactFindingSamples', () => {
  it("given a webhook message's finding whose samples an older release redacted, then their texts are redacted again", () => {
    const finding = {
      id: 'f1',
      samples: [
        { traceId: 't', text: ERRATA_KEY_TEXT },
        { traceId: 'u', text: 'Order not found' },
        { traceId: 'v', text: null },
      ],
    };
    const { data, texts } = redactFindingSamples(finding);
    expect(texts).toBe(1);
    expect(data).toEqual({
      id: 'f1',
      samples: [
        { traceId: 't', text: ERRATA_KEY_REDACTED },
        { traceId: 'u', text: 'Order not found' },
        { traceId: 'v', text: null },
      ],
    });
    expect(redactFindingSamples(data).data).toBe(data);
    expect(redactFindingSamples({ id: 'f2' })).toEqual({ data: { id: 'f2' }, texts: 0 });
  });
});
