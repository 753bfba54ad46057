import { describe, expect, it } from 'vitest';
import { detectCallFindings } from './call-findings';
import { classifyToolCall } from './classify';
import {
  errataToolSpan,
  flatResult,
  makeSpan,
  protocolErrorSpan,
  toolCallOf,
  type McpResult,
} from './fixtures.spec-helper';
import { StatusCode, type SpanRecord } from './span';

const findingsOf = (span: SpanRecord) => {
  const call = toolCallOf(span);
  return detectCallFindings(call, classifyToolCall(call));
};
const rulesOf = (span: SpanRecord) => findingsOf(span).map((finding) => finding.rule);
const text = (value: string): McpResult['content'] => [{ type: 'text', text: value }];
const mirrored = (payload: Record<string, unknown>, isError = true): McpResult => ({
  isError,
  content: text(JSON.stringify(payload)),
  structuredContent: payload,
});

describe('detectCallFindings (DOMAIN.md §7)', () => {
  it.each<[string, SpanRecord, string[]]>([
    [
      'the seed envelope (declared, mirrored): nothing',
      errataToolSpan(
        'lookup_order',
        mirrored({ errorCategory: 'transient', isRetryable: true, retryAfterMs: 1000 }),
      ),
      [],
    ],
    [
      'a bare "Refund failed": untyped-error',
      errataToolSpan('process_refund', { isError: true, content: text('Refund failed') }),
      ['untyped-error'],
    ],
    [
      'NO_TICKETS_FOUND as an error: empty-as-error (not untyped)',
      errataToolSpan(
        'searchSupportTickets',
        mirrored({ ok: false, error: { code: 'NO_TICKETS_FOUND', category: 'not_found' } }),
      ),
      ['empty-as-error'],
    ],
    [
      'isError false with "ERROR: Permission denied": failure-as-empty',
      errataToolSpan('read_file', { isError: false, content: text('ERROR: Permission denied') }),
      ['failure-as-empty'],
    ],
    [
      'metadata only in structuredContent, text not mirroring it: invisible-metadata',
      errataToolSpan('lookup_order', {
        isError: true,
        content: text('Lookup failed'),
        structuredContent: { errorCategory: 'transient', isRetryable: true },
      }),
      ['invisible-metadata'],
    ],
    [
      'metadata only in _meta (the SDK sends it as errata.error.*): invisible-metadata',
      errataToolSpan(
        'lookup_order',
        { isError: true, content: text('Order service busy') },
        { attributes: { 'errata.error.category': 'transient', 'errata.error.retryable': true } },
      ),
      ['invisible-metadata'],
    ],
    [
      'only a category in _meta, the text declaring only retryability: invisible-metadata',
      errataToolSpan(
        'lookup_order',
        flatResult({ isError: true, isRetryable: true, message: 'Order service busy' }),
        { attributes: { 'errata.error.category': 'transient', 'errata.error.retryable': true } },
      ),
      ['invisible-metadata'],
    ],
    [
      'retryability and a code declared in the text alone, no category: nothing',
      errataToolSpan(
        'lookup_order',
        flatResult({ isError: true, isRetryable: true, code: 'BUSY', description: 'Busy, try again' }),
        { attributes: { 'errata.error.retryable': true, 'errata.error.code': 'BUSY' } },
      ),
      ['untyped-error'],
    ],
    [
      'the seed envelope mirrored whole, a long description first, the stored text cut before the category: nothing',
      errataToolSpan(
        'lookup_order',
        mirrored({
          description: `Refund window closed. ${'The order was placed more than 30 days ago. '.repeat(70)}`,
          code: 'OUT_OF_RANGE',
          errorCategory: 'validation',
          isRetryable: false,
        }),
        { attributes: { 'errata.error.category': 'validation', 'errata.error.retryable': false } },
      ),
      [],
    ],
    [
      'a business failure declared retryable: retryable-mismatch',
      errataToolSpan(
        'process_refund',
        flatResult({ isError: true, errorCategory: 'business', isRetryable: true }),
      ),
      ['retryable-mismatch'],
    ],
    [
      'a JSON-RPC -32602 "Invalid date": wrong-channel',
      protocolErrorSpan('search_tickets', -32602, 'Invalid date'),
      ['wrong-channel'],
    ],
    [
      'a JSON-RPC -32601 method not found: protocol-level, fine',
      protocolErrorSpan('search_tickets', -32601, 'Method not found'),
      [],
    ],
    [
      'an unknown tool (-32602): protocol-level, fine',
      protocolErrorSpan('search_tickets', -32602, 'Unknown tool: nope'),
      [],
    ],
    [
      'a stack trace with paths: leaky-error and raw-exception',
      errataToolSpan('lookup_order', {
        isError: true,
        content: text(
          "TypeError: Cannot read properties of undefined (reading 'id')\n    at lookup (/app/src/orders.js:41:17)",
        ),
      }),
      ['untyped-error', 'leaky-error', 'raw-exception'],
    ],
    [
      'SQL in the message: leaky-error',
      errataToolSpan('list_orders', {
        isError: true,
        content: text('ERROR: syntax error at or near "FROM" in query'),
      }),
      ['untyped-error', 'leaky-error'],
    ],
    [
      'a secret in the message (redacted before storage, the placeholder remains): leaky-error',
      errataToolSpan('send_mail', {
        isError: true,
        content: text('Upstream rejected api_key=sk-live-9f8e7d6c5b4a39281706'),
      }),
      ['untyped-error', 'leaky-error'],
    ],
    [
      'a JSON-RPC error whose message is an exception: raw-exception (and wrong-channel)',
      protocolErrorSpan(
        'lookup_order',
        -32603,
        "TypeError: Cannot read properties of undefined (reading 'id')",
      ),
      ['wrong-channel', 'raw-exception'],
    ],
    [
      "a call the agent cancelled (its status message is the client's): nothing",
      makeSpan({
        name: 'tools/call slow',
        status: { code: StatusCode.ERROR, message: 'AbortError: This operation was aborted' },
        attributes: {
          'mcp.method.name': 'tools/call',
          'gen_ai.tool.name': 'slow',
          'error.type': 'AbortError',
        },
      }),
      [],
    ],
    [
      'a call cancelled by AbortSignal.timeout: nothing',
      makeSpan({
        name: 'tools/call slow',
        status: { code: StatusCode.ERROR, message: 'TimeoutError: The operation was aborted due to timeout' },
        attributes: {
          'mcp.method.name': 'tools/call',
          'gen_ai.tool.name': 'slow',
          'error.type': 'TimeoutError',
        },
      }),
      [],
    ],
  ])('%s', (_name, span, rules) => {
    expect(rulesOf(span)).toEqual(rules);
  });

  it('says what it saw', () => {
    expect(findingsOf(protocolErrorSpan('search_tickets', -32602, 'Invalid date'))).toEqual([
      { rule: 'wrong-channel', evidence: 'jsonrpc:-32602' },
    ]);
    expect(
      findingsOf(
        errataToolSpan(
          'process_refund',
          flatResult({ isError: true, errorCategory: 'business', isRetryable: true }),
        ),
      ),
    ).toEqual([{ rule: 'retryable-mismatch', evidence: 'declared_retryable:business' }]);
  });
});
