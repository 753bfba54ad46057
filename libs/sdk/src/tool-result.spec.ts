import { describe, expect, it } from 'vitest';
import { toolResultAttributes, type ResultCaptureOptions } from './tool-result';

const OPTIONS: ResultCaptureOptions = { captureResults: false, textLimitBytes: 2048 };
const text = (t: string) => ({ type: 'text', text: t });

/** Deep-freezes a result, so that any write to it by the code under test throws. */
function frozen<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) frozen(inner);
    Object.freeze(value);
  }
  return value;
}

const attributesOf = (result: unknown, options: Partial<ResultCaptureOptions> = {}) =>
  toolResultAttributes(frozen(result), 'search_tickets', { ...OPTIONS, ...options });

describe('toolResultAttributes', () => {
  it('a plain success sends its outcome only, no text', () => {
    expect(attributesOf({ content: [text('Echo: hi')] })).toEqual({
      'errata.result.is_error': false,
      'errata.result.empty': false,
    });
  });

  it('captureResults sends the text of every result', () => {
    expect(attributesOf({ content: [text('Echo: hi')] }, { captureResults: true })).toMatchObject({
      'errata.result.text': 'Echo: hi',
    });
  });

  describe('empty results', () => {
    it('no content at all is empty with 0 items', () => {
      expect(attributesOf({ content: [] })).toEqual({
        'errata.result.is_error': false,
        'errata.result.empty': true,
        'errata.result.item_count': 0,
      });
    });

    it('blank text blocks count as nothing', () => {
      expect(attributesOf({ content: [text('  ')] })).toMatchObject({ 'errata.result.empty': true });
    });

    it('a structured empty list is empty, and its text is sent', () => {
      const result = { content: [text('{"tickets":[]}')], structuredContent: { tickets: [] } };
      expect(attributesOf(result)).toEqual({
        'errata.result.is_error': false,
        'errata.result.empty': true,
        'errata.result.item_count': 0,
        'errata.result.text_mirror': true,
        'errata.result.text': '{"tickets":[]}',
        'errata.result.structured': '{"tickets":[]}',
      });
    });

    it("seed 000's success envelope for a search that matched nothing is empty, with no items", () => {
      // Given: toolSuccess({tickets: [], result_count: 0, truncated: false}), mirrored in text as seed 000 does.
      const payload = { ok: true, data: { tickets: [], result_count: 0, truncated: false }, error: null };
      const result = { content: [text(JSON.stringify(payload))], structuredContent: payload };
      // When / then: the SDK flags it empty, so the server stores ok_empty.
      expect(attributesOf(result)).toMatchObject({
        'errata.result.empty': true,
        'errata.result.item_count': 0,
      });
    });

    it('an empty JSON list in the only text block is empty, with no items (server-memory search_nodes)', () => {
      expect(attributesOf({ content: [text('{\n  "entities": [],\n  "relations": []\n}')] })).toMatchObject({
        'errata.result.empty': true,
        'errata.result.item_count': 0,
      });
    });

    it('a short "no matches" message is a valid empty result (server-filesystem search_files)', () => {
      const result = {
        content: [text('No matches found')],
        structuredContent: { content: 'No matches found' },
      };
      expect(attributesOf(result)).toMatchObject({
        'errata.result.empty': true,
        'errata.result.item_count': 0,
      });
      expect(attributesOf({ content: [text('0 results.')] })).toMatchObject({
        'errata.result.empty': true,
      });
      expect(attributesOf({ content: [text('Tool search_tickets not found')] })).toMatchObject({
        'errata.result.empty': false,
      });
    });

    it('a phrase in quotes or brackets is data, not the message’s own words: not empty', () => {
      const emptyOf = (tool: string, message: string) =>
        toolResultAttributes({ content: [text(message)] }, tool, OPTIONS)['errata.result.empty'];
      expect(
        emptyOf('search_issues', "#4521 Search page shows 'No results found' for accented queries (open)"),
      ).toBe(false);
      expect(emptyOf('query_logs', '2 hits: "0 results returned by upstream" at 10:02')).toBe(false);
      expect(emptyOf('find_files', '/srv/app/templates/not-found.html (matched: not found)')).toBe(false);
      expect(emptyOf('search_issues', "No results found for 'accented queries' (0 of 120 scanned)")).toBe(
        true,
      );
      expect(emptyOf('search_issues', "Sorry, there isn't anything: no matches")).toBe(true);
      // Counts of what was searched, and messages quoted whole, still say nothing matched.
      for (const message of [
        'No matches found in 12 files',
        'Searched 340 files: no matches',
        'No results: 0 of 120 items matched',
        '"No results found"',
        '(no results)',
        '[No matches]',
      ])
        expect(emptyOf('search_files', message)).toBe(true);
    });

    it('server-filesystem wraps its text in structuredContent { content }: an empty text or list is still empty', () => {
      expect(attributesOf({ content: [text('')], structuredContent: { content: '' } })).toMatchObject({
        'errata.result.empty': true,
        'errata.result.item_count': 0,
      });
      expect(attributesOf({ content: [text('[]')], structuredContent: { content: '[]' } })).toMatchObject({
        'errata.result.empty': true,
        'errata.result.item_count': 0,
      });
      expect(
        attributesOf({ content: [text('[]')], structuredContent: { content: '[]', path: '/tmp' } }),
      ).toMatchObject({ 'errata.result.empty': false });
    });

    it('an object that merely holds an empty list is data, not an empty result', () => {
      expect(attributesOf({ content: [], structuredContent: { orderId: '#10042', items: [] } })).toEqual({
        'errata.result.is_error': false,
        'errata.result.empty': false,
        'errata.result.text_mirror': false,
      });
    });

    it('a list counts its items', () => {
      expect(attributesOf({ content: [], structuredContent: { data: { orders: [1, 2, 3] } } })).toMatchObject(
        {
          'errata.result.empty': false,
          'errata.result.item_count': 3,
        },
      );
      expect(attributesOf({ content: [text('[1,2]')] })).toMatchObject({ 'errata.result.item_count': 2 });
    });
  });

  describe('tool errors and what they declare', () => {
    it('seed envelope: structuredContent mirrored in text, error object with category and retry flag', () => {
      const payload = {
        ok: false,
        error: {
          code: 'INVALID_DATE_RANGE',
          category: 'validation',
          message: 'start_date must be before end_date.',
          automatic_retry_allowed: true,
        },
      };
      const attributes = attributesOf({
        isError: true,
        content: [text(JSON.stringify(payload))],
        structuredContent: payload,
      });
      expect(attributes).toMatchObject({
        'error.type': 'tool_error',
        'errata.result.is_error': true,
        'errata.result.empty': false,
        'errata.result.text_mirror': true,
        'errata.error.category': 'validation',
        'errata.error.retryable': true,
        'errata.error.code': 'INVALID_DATE_RANGE',
      });
      expect(JSON.parse(attributes['errata.result.structured'] as string)).toEqual(payload);
    });

    it('seed 000 flat JSON text: errorCategory, isRetryable, retryAfterMs', () => {
      const attributes = attributesOf({
        isError: true,
        content: [
          text(
            JSON.stringify({
              errorCategory: 'transient',
              isRetryable: true,
              retryAfterMs: 2000,
              description: 'The order database timed out after 5 seconds.',
            }),
          ),
        ],
      });
      expect(attributes).toMatchObject({
        'errata.error.category': 'transient',
        'errata.error.retryable': true,
        'errata.error.retry_after_ms': 2000,
      });
      expect(attributes['errata.result.text_mirror']).toBeUndefined();
    });

    it('declared fields in _meta, namespaced keys included', () => {
      expect(
        attributesOf({
          isError: true,
          content: [text('Rate limited by upstream')],
          _meta: {
            'com.example/errorCategory': 'rate_limited',
            retriable: true,
            'com.example/retry_after_seconds': 3,
          },
        }),
      ).toMatchObject({
        'errata.error.category': 'rate_limited',
        'errata.error.retryable': true,
        'errata.error.retry_after_ms': 3000,
      });
    });

    it("a namespaced key the host's _meta object only inherits is not declared", () => {
      const meta = Object.create({ 'com.example/errorCategory': 'permission' }) as object;
      const attributes = attributesOf({ isError: true, content: [text('Rate limited')], _meta: meta });
      expect(attributes['errata.error.category']).toBeUndefined();
    });

    it('snake_case spellings: error_category and retryable', () => {
      expect(
        attributesOf({
          isError: true,
          content: [text('{"error_category":"permission","retryable":false}')],
        }),
      ).toMatchObject({ 'errata.error.category': 'permission', 'errata.error.retryable': false });
    });

    it('a plain text error sends the text, redacted, and declares nothing', () => {
      const attributes = attributesOf({
        isError: true,
        content: [
          text(
            'Access denied for alice@example.com (Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345)',
          ),
        ],
      });
      expect(attributes['errata.result.text']).not.toContain('alice@example.com');
      expect(attributes['errata.result.text']).not.toContain('abcdefghijklmnopqrstuvwxyz012345');
      expect(attributes['errata.error.category']).toBeUndefined();
    });

    it('texts are cut to the limit', () => {
      const attributes = attributesOf(
        { isError: true, content: [text('x'.repeat(5000))] },
        { textLimitBytes: 100 },
      );
      const sent = attributes['errata.result.text'] as string;
      expect(Buffer.byteLength(sent)).toBeLessThanOrEqual(100);
      expect(sent).toMatch(/truncated \d+ bytes/);
    });
  });

  describe('results that claim success but failed (sent for the failure-as-empty check)', () => {
    it('structured ok:false with an error object', () => {
      const payload = { ok: false, error: { category: 'transient', message: 'upstream unavailable' } };
      expect(
        attributesOf({ content: [text(JSON.stringify(payload))], structuredContent: payload }),
      ).toMatchObject({
        'errata.result.is_error': false,
        'errata.result.structured': JSON.stringify(payload),
        'errata.error.category': 'transient',
      });
    });

    it('a message that says it failed', () => {
      expect(attributesOf({ content: [text('Operation failed: the search index timed out')] })).toMatchObject(
        {
          'errata.result.is_error': false,
          'errata.result.text': 'Operation failed: the search index timed out',
        },
      );
    });

    it('a product category in a successful result is not a declared error', () => {
      const attributes = attributesOf({
        content: [],
        structuredContent: { name: 'Dune', category: 'books' },
      });
      expect(attributes['errata.error.category']).toBeUndefined();
      expect(attributes['errata.result.structured']).toBeUndefined();
    });
  });

  it('a text block per item is read in one pass: the structured content is written out once, not once per block', () => {
    /** How often the analysis reads the structured content's list, for a result of `count` items. */
    const readsFor = (count: number): number => {
      const items = Array.from({ length: count }, (_, i) => ({ id: i, name: `item ${i}` }));
      let reads = 0;
      const structured = {
        get items() {
          reads++;
          return items;
        },
      };
      const result = {
        content: items.map((item) => text(JSON.stringify(item))),
        structuredContent: structured,
      };
      expect(toolResultAttributes(result, 'list_items', OPTIONS)).toMatchObject({
        'errata.result.text_mirror': false,
      });
      return reads;
    };
    // It was written out in canonical form once per JSON text block: 10 more reads for 10 more blocks.
    expect(readsFor(50)).toBe(readsFor(40));
  });

  it('declared fields leave the process redacted and cut to the text limit: a `code` key may hold anything', () => {
    const attributes = attributesOf({
      isError: true,
      content: [text('Execution failed')],
      structuredContent: {
        code: 'client = OpenAI(api_key="sk-proj-abcdefghijklmnopqrstuvwx")  # jane.doe@example.com',
        errorCategory: 'y'.repeat(100_000),
      },
    });
    expect(attributes['errata.error.code']).toBe(
      'client = OpenAI(api_key="[REDACTED:api_key]")  # [REDACTED:email]',
    );
    expect(Buffer.byteLength(String(attributes['errata.error.category']))).toBeLessThanOrEqual(2048);
    expect(String(attributes['errata.error.category'])).toMatch(/^y{2000}/);
  });

  it('declared fields are read from the whole result, also past the part of a JSON text that is sent', () => {
    const payload = {
      description: 'Upstream timed out',
      details: 'd'.repeat(2500),
      errorCategory: 'transient',
      isRetryable: true,
      retryAfterMs: 5000,
    };
    expect(attributesOf({ isError: true, content: [text(JSON.stringify(payload))] })).toMatchObject({
      'errata.error.category': 'transient',
      'errata.error.retryable': true,
      'errata.error.retry_after_ms': 5000,
    });
  });

  it('structured content over the limit is redacted before it is shrunk, and still parses after redaction', () => {
    const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const jwt = `${b64({ alg: 'RS256', kid: 'k'.repeat(40) })}.${b64({ sub: 'user-1', pad: 'p'.repeat(300) })}.${'s'.repeat(342)}`;
    const addresses = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`u${i}`, `a${i}@b.co`]));
    const structured = {
      ok: false,
      error: { message: 'session rejected' },
      session: { note: jwt, contact: `${'x'.repeat(500)} jane.doe@example.com` },
      ...addresses,
    };
    const sent = String(
      attributesOf({ content: [text('see structured')], structuredContent: structured })[
        'errata.result.structured'
      ],
    );
    expect(Buffer.byteLength(sent)).toBeLessThanOrEqual(2048);
    const parsed = JSON.parse(sent) as { ok: boolean; session: { note: string; contact: string } };
    expect(parsed.ok).toBe(false);
    expect(parsed.session.note).toMatch(/^\[REDACTED:jwt\]/);
    expect(sent).not.toContain('eyJ');
    expect(sent).not.toMatch(/jane\.doe|@b\.co/);
  });

  it('text_mirror is false when no text block carries the structured JSON', () => {
    expect(attributesOf({ content: [text('3 orders')], structuredContent: { count: 3 } })).toMatchObject({
      'errata.result.text_mirror': false,
    });
  });

  it('reads malformed results without throwing', () => {
    for (const result of [undefined, null, 42, 'text', { content: 'nope' }, { content: [null, 7, {}] }]) {
      expect(() => toolResultAttributes(result, 'lookup', OPTIONS)).not.toThrow();
    }
  });
});
