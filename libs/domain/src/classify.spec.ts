import { describe, expect, it } from 'vitest';

import { classifyToolCall, isEmptyListPayload, listPayloadArrays } from './classify';
import { errataToolSpan, makeSpan, protocolErrorSpan, toolCallOf } from './fixtures.spec-helper';
import { CATEGORY_SYNONYMS, RULES_VERSION } from './rules';
import { declaredErrorOf } from './result-signals';
import { fitJson } from './json-fit';
import { truncateUtf8 } from './redaction';
import { StatusCode } from './span';
import { isSearchLikeTool, toolNameWords } from './tool-names';

/** A failed call of `tool` with the given text block and extra attributes. */
const failed = (
  text: string | null,
  attributes: Record<string, string | number | boolean> = {},
  tool = 'get_order',
) =>
  classifyToolCall(
    toolCallOf(
      errataToolSpan(
        tool,
        { isError: true, content: text === null ? [] : [{ type: 'text', text }] },
        { attributes },
      ),
    ),
  );

const withStructured = (structuredContent: unknown, isError = true, tool = 'get_order') =>
  classifyToolCall(toolCallOf(errataToolSpan(tool, { isError, structuredContent })));

describe('classifyToolCall: declared categories', () => {
  it.each(Object.entries(CATEGORY_SYNONYMS))('maps declared %j to %s', (value, category) => {
    expect(failed(null, { 'errata.error.category': value })).toMatchObject({
      failed: true,
      category,
      source: 'declared',
      declaredRaw: value,
      rulesVersion: RULES_VERSION,
    });
  });

  it('accepts spellings case- and separator-insensitively (Rate-Limited, RATE LIMITED)', () => {
    expect(failed(null, { 'errata.error.category': 'Rate-Limited' }).category).toBe('transient');
    expect(failed(null, { 'errata.error.category': 'INVALID ARGUMENT' }).category).toBe('validation');
  });

  it.each([
    ['errorCategory', { errorCategory: 'business' }],
    ['category', { category: 'business' }],
    ['error.category', { 'error.category': 'business' }],
    ['error_category', { error_category: 'business' }],
    ['nested error.category', { ok: false, error: { category: 'business' } }],
    ['_meta', { _meta: { errorCategory: 'business' } }],
    ['namespaced _meta key', { _meta: { 'com.example/errorCategory': 'business' } }],
  ])('reads the declared category from the payload key %s', (_key, payload) => {
    expect(withStructured(payload)).toMatchObject({ category: 'business', source: 'declared' });
    // …and from the same JSON in a text block.
    expect(failed(JSON.stringify(payload))).toMatchObject({ category: 'business', source: 'declared' });
  });

  it('reads a namespaced key only after a slash, the first in key order', () => {
    // `xerrorCategory` only ends like the key; `a/category` comes after `b/errorCategory` in key order but its
    // key is read later (CATEGORY_KEYS order), so the namespaced errorCategory wins.
    expect(
      withStructured({
        _meta: { xerrorCategory: 'permission', 'b/errorCategory': 'business', 'a/category': 'auth' },
      }).category,
    ).toBe('business');
    expect(withStructured({ _meta: { xerrorCategory: 'permission' } }).source).not.toBe('declared');
  });

  it('prefers errorCategory over a bare category, and a known value over an unknown one', () => {
    expect(withStructured({ category: 'electronics', errorCategory: 'permission' }).category).toBe(
      'permission',
    );
    expect(withStructured({ category: 'electronics', error: { category: 'validation' } }).category).toBe(
      'validation',
    );
  });

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])(
    'given a declared %j (an object prototype member), then no declared category: unknown',
    (value) => {
      for (const classification of [
        failed(null, { 'errata.error.category': value }),
        withStructured({ ok: false, error: { category: value } }),
        failed(JSON.stringify({ category: value, message: 'failed' })),
      ]) {
        expect(classification).toMatchObject({ failed: true, category: 'unknown' });
        expect(classification.source).not.toBe('declared');
      }
    },
  );

  it('cuts a long declared code in the evidence (a key of the finding rollups, indexed with the names)', () => {
    const code = `NO_${'X'.repeat(1_900)}_FOUND`;
    const classification = withStructured({ ok: false, error: { code } }, true, 'search_orders');
    expect(classification.emptyAsError).toBe(true);
    expect(Buffer.byteLength(classification.evidence!)).toBeLessThan(200);
    expect(classification.evidence).toMatch(/^empty:code:NO_X+…\[truncated \d+ bytes\]$/);
  });

  it('given internal, then unknown from the declared source, raw value kept', () => {
    expect(withStructured({ error: { code: 'INTERNAL_ERROR', category: 'internal' } })).toMatchObject({
      category: 'unknown',
      source: 'declared',
      declaredRaw: 'internal',
      retryable: null,
    });
  });

  it('given not_found, then validation on a lookup and empty-as-error on a search/list tool', () => {
    const payload = { ok: false, error: { code: 'TICKET_NOT_FOUND', category: 'not_found' } };
    expect(withStructured(payload, true, 'get_ticket')).toMatchObject({
      category: 'validation',
      source: 'declared',
      declaredRaw: 'not_found',
      emptyAsError: false,
    });
    expect(withStructured(payload, true, 'search_tickets')).toMatchObject({
      category: 'empty',
      source: 'declared',
      declaredRaw: 'not_found',
      emptyAsError: true,
      retryable: false,
    });
  });

  it('given an unknown declared value, then later sources decide and the raw value is still reported', () => {
    expect(withStructured({ errorCategory: 'oops', message: 'Rate limit hit' })).toMatchObject({
      category: 'transient',
      source: 'text',
      declaredRaw: 'oops',
    });
  });

  it('given JSON cut by truncation, then the declared keys are still found', () => {
    const cut =
      '{"errorCategory":"business","retriable":false,"retryAfterMs":250,"description":"Refund exceeds…[truncated 900 bytes]';
    expect(failed(cut)).toMatchObject({
      category: 'business',
      source: 'declared',
      retryable: false,
      retryAfterMs: 250,
    });
  });
});

describe('classifyToolCall: code source', () => {
  it.each([
    [-32602, 'validation'],
    [-32600, 'validation'],
    [-32700, 'validation'],
    [-32001, 'transient'],
    [-32000, 'transient'],
  ])('maps JSON-RPC %i to %s', (code, category) => {
    expect(classifyToolCall(toolCallOf(protocolErrorSpan('t', code, '')))).toMatchObject({
      category,
      source: 'code',
    });
  });

  it('given an unmapped JSON-RPC code and no text, then unknown from none', () => {
    expect(classifyToolCall(toolCallOf(protocolErrorSpan('t', -32603, '')))).toMatchObject({
      category: 'unknown',
      source: 'none',
    });
  });

  it('given a timeout or transport outcome without a code, then transient (the SDK codes -32001 / -32000)', () => {
    const timeout = makeSpan({
      name: 'tools/call t',
      attributes: { 'mcp.method.name': 'tools/call', 'error.type': 'timeout' },
    });
    const refused = makeSpan({
      name: 'tools/call t',
      attributes: { 'mcp.method.name': 'tools/call', 'error.type': 'ECONNREFUSED' },
    });
    expect(classifyToolCall(toolCallOf(timeout))).toMatchObject({
      category: 'transient',
      source: 'code',
      evidence: 'jsonrpc:-32001',
    });
    expect(classifyToolCall(toolCallOf(refused))).toMatchObject({
      category: 'transient',
      source: 'code',
      evidence: 'jsonrpc:-32000',
    });
  });

  it.each([
    [401, 'permission'],
    [403, 'permission'],
    [408, 'transient'],
    [429, 'transient'],
    [502, 'transient'],
    [503, 'transient'],
    [504, 'transient'],
    [409, 'business'],
    [422, 'business'],
  ])('maps HTTP %i to %s, from each place a status can come from', (status, category) => {
    const expected = { category, source: 'code', evidence: `http:${status}` };
    expect(failed(null, { 'http.response.status_code': status })).toMatchObject(expected);
    expect(failed(null, { 'errata.error.code': String(status) })).toMatchObject(expected);
    expect(withStructured({ error: { statusCode: status } })).toMatchObject(expected);
    expect(failed(`Request failed with status code ${status}`)).toMatchObject(expected);
  });

  it.each([
    [-32602, 'validation'],
    [-32001, 'transient'],
  ])('maps a JSON-RPC code %i a tool result declares as its own to %s', (code, category) => {
    const expected = { category, source: 'code', evidence: `jsonrpc:${code}` };
    expect(failed('Rejected', { 'errata.error.code': String(code) })).toMatchObject(expected);
    expect(withStructured({ error: { code, message: 'Rejected' } })).toMatchObject(expected);
  });

  describe('given an HTTP error status answered to an HTTP transport (a transport_error)', () => {
    const httpFailure = (status: number | null, message: string) =>
      classifyToolCall(
        toolCallOf(
          makeSpan({
            name: 'tools/call t',
            status: { code: StatusCode.ERROR, message },
            attributes: {
              'mcp.method.name': 'tools/call',
              'error.type': 'StreamableHTTPError',
              ...(status === null ? {} : { 'http.response.status_code': status }),
            },
          }),
        ),
      );

    it('when the status maps to a category, then that category, not the transient one the outcome implies', () => {
      expect(httpFailure(401, 'Streamable HTTP error: Error POSTing to endpoint: ')).toMatchObject({
        category: 'permission',
        source: 'code',
        evidence: 'http:401',
      });
      expect(httpFailure(503, 'Streamable HTTP error: Error POSTing to endpoint: ')).toMatchObject({
        category: 'transient',
        evidence: 'http:503',
      });
    });

    it('when the MCP SDK could not authorize past a 401 / 403 (UnauthorizedError, no status), then permission', () => {
      const unauthorized = makeSpan({
        name: 'tools/call t',
        status: { code: StatusCode.ERROR, message: 'Unauthorized' },
        attributes: { 'mcp.method.name': 'tools/call', 'error.type': 'UnauthorizedError' },
      });
      expect(classifyToolCall(toolCallOf(unauthorized))).toMatchObject({
        category: 'permission',
        source: 'code',
        evidence: 'error.type:UnauthorizedError',
      });
    });

    it('when the status maps to none (404 for a forgotten session, 500), then transient by the implied -32000', () => {
      expect(
        httpFailure(404, 'Streamable HTTP error: Error POSTing to endpoint: Session not found'),
      ).toMatchObject({ category: 'transient', source: 'code', evidence: 'jsonrpc:-32000' });
      expect(httpFailure(null, 'Streamable HTTP error: Unexpected content type: text/html')).toMatchObject({
        category: 'transient',
        evidence: 'jsonrpc:-32000',
      });
    });
  });

  it('given an HTTP status with no mapping (400, 404, 500), then the text decides', () => {
    expect(failed('HTTP 500: the database must be restarted')).toMatchObject({
      category: 'validation',
      source: 'text',
    });
  });
});

describe('classifyToolCall: text rules', () => {
  it.each([
    ['Access denied - path outside allowed directories', 'permission'],
    ['ERROR: Permission denied', 'permission'],
    ['403 Forbidden', 'permission'],
    ['User is not authorized to view financial records', 'permission'],
    ['The order database timed out after 5 seconds', 'transient'],
    ['connect ETIMEDOUT 10.0.0.1:443', 'transient'],
    ['read ECONNRESET', 'transient'],
    ['Rate limit exceeded, retry later', 'transient'],
    ['RATE_LIMITED', 'transient'],
    ['Service unavailable', 'transient'],
    ['Invalid departure date: must be in the future. Current date is 08/08/2025.', 'validation'],
    ['Input validation error: expected string, received number', 'validation'],
    ['order_id is required', 'validation'],
    ['Refund exceeds automatic approval limit.', 'business'],
    ['Discount is not allowed for this plan', 'business'],
    ['Customer is outside the return window', 'business'],
    ['Blocked by data retention policy', 'business'],
  ])('classifies %j as %s', (text, category) => {
    expect(failed(text)).toMatchObject({ category, source: 'text' });
  });

  it('applies the specificity order permission > transient > validation > business', () => {
    expect(failed('Permission check timed out').category).toBe('permission');
    expect(failed('Rate limit: amount must be lower').category).toBe('transient');
    expect(failed('Invalid amount: exceeds the limit').category).toBe('validation');
  });

  it('does not read unrelated words as rules (unexpected, windows, requires)', () => {
    expect(failed('Unexpected failure on Windows host; requires a reboot')).toMatchObject({
      category: 'unknown',
      source: 'none',
    });
    expect(failed('Operation failed')).toMatchObject({
      category: 'unknown',
      source: 'none',
      retryable: null,
    });
  });
});

describe('classifyToolCall: retryability', () => {
  it.each(['isRetryable', 'retriable', 'retryable', 'automatic_retry_allowed'])(
    'reads declared %s',
    (key) => {
      expect(withStructured({ errorCategory: 'transient', [key]: false })).toMatchObject({
        retryable: false,
        retryableSource: 'declared',
      });
    },
  );

  it('prefers errata.error.retryable over the payload', () => {
    const call = toolCallOf(
      errataToolSpan(
        't',
        { isError: true, structuredContent: { errorCategory: 'business', retriable: false } },
        { attributes: { 'errata.error.retryable': true } },
      ),
    );
    expect(classifyToolCall(call).retryable).toBe(true);
  });

  it.each([
    ['transient', true],
    ['validation', 'after_change'],
    ['business', false],
    ['permission', false],
  ] as const)('implies retryability from category %s', (category, retryable) => {
    expect(failed(null, { 'errata.error.category': category })).toMatchObject({
      retryable,
      retryableSource: 'implied',
    });
  });

  it('given an unknown category and no declaration, then retryability is unknown', () => {
    expect(failed('Operation failed')).toMatchObject({ retryable: null, retryableSource: null });
  });
});

describe('classifyToolCall: empty-as-error', () => {
  it.each([
    ['search_docs', { isError: true, content: [{ type: 'text', text: 'No results found.' }] }, 'text'],
    [
      'get_customer_orders',
      { isError: true, content: [{ type: 'text', text: '0 results for customer' }] },
      'text',
    ],
    ['find_files', { isError: true, content: [{ type: 'text', text: 'Pattern not found' }] }, 'text'],
    ['list_orders', { isError: true, structuredContent: { orders: [] } }, 'declared'],
    ['lookup_order', { isError: true, structuredContent: { error: { code: 'NO_RESULTS' } } }, 'declared'],
    [
      'searchSupportTickets',
      { isError: true, structuredContent: { error: { code: 'NO_TICKETS_FOUND' } } },
      'declared',
    ],
  ] as const)('given %s returning isError for no match, then category empty', (tool, result, source) => {
    expect(classifyToolCall(toolCallOf(errataToolSpan(tool, result)))).toMatchObject({
      failed: true,
      category: 'empty',
      source,
      emptyAsError: true,
      failureAsEmpty: false,
    });
  });

  it('given an error that quotes a "no results" phrase (a title, a log line), then not empty: only its own words count', () => {
    expect(
      failed("Cannot close issue 'No results found': permission denied", {}, 'search_issues').emptyAsError,
    ).toBe(false);
    expect(failed('"No results found"', {}, 'search_issues').emptyAsError).toBe(true);
  });

  it.each([
    [
      'a timeout',
      'Search backend timed out after 5s, no results returned. Retry later.',
      {},
      { category: 'transient', source: 'text' },
    ],
    [
      'an access denial',
      'Access denied: no matches visible to this user',
      {},
      { category: 'permission', source: 'text' },
    ],
    [
      'an HTTP 503',
      'Storage service unavailable (HTTP 503); 0 results',
      { 'http.response.status_code': 503 },
      { category: 'transient', source: 'code', evidence: 'http:503' },
    ],
  ] as const)(
    'given a "no results" error caused by %s, then that failure, not empty-as-error (not a valid empty result)',
    (_cause, text, attributes, expected) => {
      expect(failed(text, attributes, 'search_web')).toMatchObject({ ...expected, emptyAsError: false });
    },
  );

  it('given an empty list payload whose message says it timed out, then transient, not empty', () => {
    expect(
      withStructured({ items: [], message: 'Upstream timed out; no results' }, true, 'list_items'),
    ).toMatchObject({ category: 'transient', emptyAsError: false });
  });

  it('given a "no results" message quoting an access failure, then still empty: only its own words count', () => {
    expect(failed('No results found for "timeout errors"', {}, 'search_issues')).toMatchObject({
      category: 'empty',
      emptyAsError: true,
    });
  });

  it.each([
    // A status code read in the message comes after empty-as-error: these are queries, not the tool's failures.
    ['search_logs', 'No results found for "HTTP 503"'],
    ['search_logs', 'No results found for "status code 429"'],
    ['search_logs', 'No results found for "HTTP 503 errors"'],
    // A query echoed without quotes is the query too.
    ['search_logs', 'No results found for connection timeout'],
    ['search_docs', 'No results found for rate limit'],
    ['search_issues', 'No matches for permission denied'],
    ['search_tickets', 'No tickets found for user cannot view invoices'],
    ['search_logs', '0 results matching access denied, try another query'],
  ])('given %s answering %j, then empty-as-error: it echoes the query', (tool, text) => {
    expect(failed(text, {}, tool)).toMatchObject({ category: 'empty', emptyAsError: true });
  });

  it.each([
    // A status code of the tool's own, not inside an echoed query
    ['Search failed (HTTP 503): no results returned', 'transient'],
    ['Search API returned status 429 - no results', 'transient'],
    ['Request failed with status code 503: 0 results', 'transient'],
    ['HTTP 401 - no results', 'permission'],
    // A reason given after the echoed query
    ['No results found for invoices because the upstream timed out', 'transient'],
    ['No results returned for orders due to rate limiting', 'transient'],
    ['No results for "refunds" as the search service is unavailable', 'transient'],
    ['No results found for user - permission denied', 'permission'],
    ['No results with insufficient scopes', 'permission'],
  ])('given search_logs answering %j, then %s: the failure is the tool’s own', (text, category) => {
    expect(failed(text, {}, 'search_logs')).toMatchObject({ category, emptyAsError: false });
  });

  it('given a status code the call carries, or one after the echoed query, then that failure', () => {
    expect(
      failed('No results found for "timeouts"', { 'http.response.status_code': 503 }, 'search_logs'),
    ).toMatchObject({ category: 'transient', source: 'code' });
    expect(
      failed('No results for connection timeout: search backend unavailable', {}, 'search_logs'),
    ).toMatchObject({
      category: 'transient',
      emptyAsError: false,
    });
  });

  it('given declared not_found on a lookup whose message says "No matching …", then validation, not empty', () => {
    const payload = { errorCategory: 'not_found', message: 'No matching customer for id CUS-1' };
    expect(withStructured(payload, true, 'get_customer')).toMatchObject({
      category: 'validation',
      source: 'declared',
      emptyAsError: false,
    });
  });

  it('given "No matching <thing>", then empty on a search tool only: on a lookup it is a wrong identifier', () => {
    expect(failed('No matching order for id ORD-12', {}, 'get_order').emptyAsError).toBe(false);
    expect(failed('No matching orders for customer CUS-1', {}, 'search_orders')).toMatchObject({
      category: 'empty',
      emptyAsError: true,
    });
  });

  it('given "not found" on a lookup, or the SDK unknown-tool message on a search tool, then not empty', () => {
    expect(failed('Order ORD-1 not found').emptyAsError).toBe(false);
    expect(failed('Tool search_docs not found', {}, 'search_docs').emptyAsError).toBe(false);
  });

  it('given a declared canonical category, then no empty-as-error even when the text says no results', () => {
    expect(failed('No results: query is required', { 'errata.error.category': 'validation' })).toMatchObject({
      category: 'validation',
      emptyAsError: false,
    });
  });

  it('only applies to tool errors', () => {
    const protocol = toolCallOf(protocolErrorSpan('search_docs', -32603, 'No results'));
    expect(classifyToolCall(protocol).emptyAsError).toBe(false);
  });
});

describe('classifyToolCall: failure-as-empty', () => {
  const ok = (result: Parameters<typeof errataToolSpan>[1], empty?: boolean) =>
    classifyToolCall(toolCallOf(errataToolSpan('search_docs', { ...result, isError: false }, { empty })));

  it.each([
    ['ok: false', { structuredContent: { ok: false, data: null } }],
    ['success: false', { structuredContent: { success: false } }],
    ['status "error"', { structuredContent: { status: 'error', items: [] } }],
    ['an error object', { structuredContent: { ok: true, error: { code: 'TICKET_NOT_FOUND' } } }],
    ['non-empty errors', { structuredContent: { data: null, errors: [{ message: 'boom' }] } }],
    ['a declared errorCategory', { structuredContent: { errorCategory: 'business' } }],
    ['"ERROR: Permission denied"', { content: [{ type: 'text', text: 'ERROR: Permission denied' }] }],
    ['"Failed to reach the index"', { content: [{ type: 'text', text: 'Failed to reach the index' }] }],
    ['"Request timed out"', { content: [{ type: 'text', text: 'Request timed out' }] }],
    ['an exception', { content: [{ type: 'text', text: 'java.lang.NullPointerException at Foo.bar' }] }],
    [
      'a JSON message',
      { content: [{ type: 'text', text: '{"results":[],"message":"Search failed: index offline"}' }] },
    ],
  ])('given a successful result with %s, then failure-as-empty, not failed', (_signal, result) => {
    expect(ok(result, true)).toMatchObject({
      failed: false,
      failureAsEmpty: true,
      category: null,
      emptyAsError: false,
    });
  });

  it.each([
    [
      'a valid empty result',
      { structuredContent: { orders: [], message: 'Customer CUS-4471 has no orders.' } },
    ],
    ['"No results found."', { content: [{ type: 'text', text: 'No results found.' }] }],
    [
      'data that mentions errors',
      { structuredContent: { ok: true, tickets: [{ title: 'Login error after update' }], error: null } },
    ],
    [
      'a success envelope',
      { structuredContent: { ok: true, data: { ticket_id: 'SUP-1042', status: 'open' }, error: null } },
    ],
  ])('given %s, then no finding', (_case, result) => {
    expect(ok(result)).toMatchObject({ failed: false, failureAsEmpty: false, evidence: null });
  });
});

describe('classifyToolCall: a text mirroring the structured payload, cut short', () => {
  // server-memory's read_graph as Errata's SDK sends it with captureResults: the graph as structured content, shrunk
  // to JSON that still parses, and its text mirror (indented JSON) cut at 2 KiB, which no longer parses.
  const graph = {
    entities: Array.from({ length: 30 }, (_, i) => ({
      type: 'entity',
      name: `ticket-${i}`,
      entityType: 'ticket',
      observations: [`Customer reported: Login error: code ${i}`],
    })),
    relations: [],
  };
  const cutText = truncateUtf8(JSON.stringify(graph, null, 2), 2048);
  const readGraph = (attributes: Record<string, string | boolean>) =>
    classifyToolCall(
      toolCallOf(
        errataToolSpan(
          'read_graph',
          { isError: false },
          { attributes: { 'errata.result.text': cutText, ...attributes } },
        ),
      ),
    );

  it('given text_mirror, then the data in the cut text is no hidden failure (the SDK found none)', () => {
    const structured = fitJson(graph, 2048)?.text ?? '';
    expect(
      readGraph({ 'errata.result.structured': structured, 'errata.result.text_mirror': true }),
    ).toMatchObject({
      failed: false,
      failureAsEmpty: false,
      evidence: null,
    });
  });

  it('given only the text (a plain exporter), then the text rules still read it', () => {
    expect(readGraph({})).toMatchObject({ failed: false, failureAsEmpty: true });
  });
});

describe('isSearchLikeTool', () => {
  it.each([
    ['search_docs', true],
    ['searchSupportTickets', true],
    ['brave_web_search', true],
    ['listIssues', true],
    ['list-files', true],
    ['query_database', true],
    ['find_files', true],
    ['SearchQueries', true],
    ['findById', false],
    ['find_order_by_id', false],
    ['get_order', false],
    ['lookup_order', false],
    ['playlist_add', false],
    ['listen', false],
  ])('%s → %s', (name, expected) => {
    expect(isSearchLikeTool(name)).toBe(expected);
  });

  it('splits names into words', () => {
    expect(toolNameWords('HTTPGetURL_v2')).toEqual(['http', 'get', 'url', 'v2']);
  });
});

describe('classifyToolCall: unchanged by span status alone', () => {
  it('given a successful call, then no category or retryability', () => {
    const call = toolCallOf(errataToolSpan('t', { isError: false }, { status: { code: StatusCode.OK } }));
    expect(classifyToolCall(call)).toEqual({
      rulesVersion: RULES_VERSION,
      failed: false,
      category: null,
      source: null,
      declaredRaw: null,
      retryable: null,
      retryableSource: null,
      retryAfterMs: null,
      emptyAsError: false,
      failureAsEmpty: false,
      evidence: null,
      customerExplanation: false,
    });
  });
});

describe('isEmptyListPayload / listPayloadArrays', () => {
  it.each([
    [[], true],
    [{ orders: [], message: 'Customer CUS-4471 has no orders.' }, true],
    [{ entities: [], relations: [] }, true],
    [{ data: { items: [], total: 0 }, ok: true }, true],
    [{ result: [], nextCursor: null }, true],
    // Seed 000's toolSuccess envelope for a search that matched nothing.
    [{ ok: true, data: { tickets: [], result_count: 0, truncated: false }, error: null }, true],
    [
      { ok: true, data: { tickets: [{ id: 'SUP-1' }], result_count: 1, truncated: false }, error: null },
      false,
    ],
    [{ ok: true, data: { tickets: [] }, error: 'upstream down' }, false],
    [{ orders: [{ id: 1 }], total: 1 }, false],
    [{ orderId: '#10042', items: [] }, false],
    [{ ok: false, items: [] }, false],
    [{ message: 'nothing' }, false],
    ['[]', false],
  ])('%j → %s', (json, empty) => {
    expect(isEmptyListPayload(json)).toBe(empty);
  });

  it('lists of a list result, null for data that merely holds a list', () => {
    expect(listPayloadArrays({ orders: [1, 2, 3], total: 3, nextCursor: 'c' })).toEqual([[1, 2, 3]]);
    expect(listPayloadArrays({ orderId: '#1', items: [1, 2] })).toBeNull();
  });
});

describe('declaredErrorOf: retry-after', () => {
  it('reads seconds as milliseconds, and skips a value past the integers it is stored as', () => {
    expect(declaredErrorOf('{"retryAfterSeconds":2.5}', null).retryAfterMs).toBe(2500);
    expect(declaredErrorOf('{"retryAfterSeconds":1e20}', null).retryAfterMs).toBeNull();
    expect(declaredErrorOf('{"retryAfterSeconds":1e20,"retry_after":3}', null).retryAfterMs).toBe(3000);
  });
});
