/**
 * Every example tool result of /work/shared/seeds as an MCP `CallToolResult`, with what its server declares
 * (raw, as the SDK must read it) and how Errata classifies it. Test vectors for the SDK's fixture MCP server.
 */
export interface SeedExample {
  readonly name: string;
  readonly seed: string;
  readonly tool: string;
  readonly result: {
    readonly isError?: boolean;
    /** Absent in seed 000's first example, a result made of its fields alone. */
    readonly content?: readonly { readonly type: 'text'; readonly text: string }[];
    readonly structuredContent?: Record<string, unknown>;
    readonly _meta?: Record<string, unknown>;
    /** Seed 000's fields written on the result itself, beside `content`. */
    readonly [field: string]: unknown;
  };
  /** `errata.error.*` the SDK sends; absent keys are not sent. */
  readonly declared: {
    readonly category?: string;
    readonly retryable?: boolean;
    readonly code?: string;
    readonly retryAfterMs?: number;
  };
  readonly outcome: 'ok' | 'ok_empty' | 'tool_error';
  /** The failure category, 'empty' for empty-as-error, null for calls that did not fail. */
  readonly category: string | null;
  /** A success that hides a failure (DOMAIN.md §3). */
  readonly failureAsEmpty?: boolean;
}

const text = (value: unknown) => ({
  type: 'text' as const,
  text: typeof value === 'string' ? value : JSON.stringify(value),
});

/** The seeds' recommended envelope: the payload in structuredContent, mirrored as JSON text. */
const mirrored = (payload: Record<string, unknown>, isError = true) => ({
  isError,
  content: [text(payload)],
  structuredContent: payload,
});

/** Seed 000's flat examples: the fields as a JSON text block. */
const flat = (payload: Record<string, unknown>) => ({ isError: true, content: [text(payload)] });

/** Seed 000's first example, served as a text block and, literally, as fields of the result itself. */
const ORDER_DATABASE_TIMEOUT = {
  errorCategory: 'transient',
  isRetryable: true,
  description:
    'The order database timed out after 5 seconds. The request is valid and may succeed if retried after a short delay.',
};

export const SEED_EXAMPLES: readonly SeedExample[] = [
  {
    name: 'transient: order database timed out',
    seed: '000',
    tool: 'lookup_order',
    result: flat(ORDER_DATABASE_TIMEOUT),
    declared: { category: 'transient', retryable: true },
    outcome: 'tool_error',
    category: 'transient',
  },
  {
    name: 'validation: order id format',
    seed: '000',
    tool: 'lookup_order',
    result: flat({
      errorCategory: 'validation',
      isRetryable: true,
      description:
        "Order ID must be in format #NNNNN, such as #12345. Received 'order-abc'. Reformat the order ID and retry.",
    }),
    declared: { category: 'validation', retryable: true },
    outcome: 'tool_error',
    category: 'validation',
  },
  {
    name: 'business: refund over the automatic limit',
    seed: '000',
    tool: 'process_refund',
    result: flat({
      errorCategory: 'business',
      isRetryable: false,
      description:
        'The requested refund of $750 exceeds the $500 automatic refund limit. Retrying will not succeed. Escalate to a manager for approval.',
    }),
    declared: { category: 'business', retryable: false },
    outcome: 'tool_error',
    category: 'business',
  },
  {
    name: 'permission: financial records',
    seed: '000',
    tool: 'get_financials',
    result: flat({
      errorCategory: 'permission',
      isRetryable: false,
      description:
        'The current user does not have permission to access financial records. Request elevated access or escalate to a user with financial-system permissions.',
    }),
    declared: { category: 'permission', retryable: false },
    outcome: 'tool_error',
    category: 'permission',
  },
  {
    name: 'literal: the fields on the result itself, no content (seed 000’s first example)',
    seed: '000',
    tool: 'lookup_order',
    result: { isError: true, ...ORDER_DATABASE_TIMEOUT },
    declared: { category: 'transient', retryable: true },
    outcome: 'tool_error',
    category: 'transient',
  },
  {
    name: 'exam-shaped: the fields beside content (seed 000)',
    seed: '000',
    tool: 'process_refund',
    result: {
      isError: true,
      content: [text('Refund exceeds automatic approval limit.')],
      errorCategory: 'business',
      isRetryable: false,
      description: 'Refund amount exceeds limit. Escalate to a manager.',
    },
    declared: { category: 'business', retryable: false },
    outcome: 'tool_error',
    category: 'business',
  },
  {
    name: 'richer schema: category + automatic_retry_allowed',
    seed: '000',
    tool: 'create_ticket',
    result: flat({ category: 'validation', recoverable: true, automatic_retry_allowed: true }),
    declared: { category: 'validation', retryable: true },
    outcome: 'tool_error',
    category: 'validation',
  },
  {
    name: 'subagent local recovery: transient, not retryable, with partial results',
    seed: '000',
    tool: 'research',
    result: flat({
      errorCategory: 'transient',
      isRetryable: false,
      description: 'Research subagent retried two sources continued timing out.',
      partialResults: [
        { source: 'knowledge_base', status: 'success', resultCount: 4 },
        { source: 'support_tickets', status: 'success', resultCount: 2 },
      ],
      attempted: [
        'Searched knowledge_base once: succeeded',
        'Searched web_search three times: timed out each time',
      ],
    }),
    declared: { category: 'transient', retryable: false },
    outcome: 'tool_error',
    category: 'transient',
  },
  {
    name: 'bad pattern: isError false with "No results found."',
    seed: '000',
    tool: 'research',
    result: { isError: false, content: [text('No results found.')] },
    declared: {},
    outcome: 'ok_empty',
    category: null,
  },
  {
    name: 'envelope: INVALID_DATE_RANGE in structuredContent mirrored as text',
    seed: '000',
    tool: 'list_orders',
    result: mirrored({
      ok: false,
      error: {
        code: 'INVALID_DATE_RANGE',
        category: 'validation',
        message: 'start_date must be before end_date.',
        recoverable: true,
        automatic_retry_allowed: true,
        suggested_action: 'Retry with start_date earlier than end_date.',
        example_arguments: { start_date: '2026-07-01', end_date: '2026-07-10' },
      },
    }),
    declared: { category: 'validation', retryable: true, code: 'INVALID_DATE_RANGE' },
    outcome: 'tool_error',
    category: 'validation',
  },
  {
    name: 'envelope: success',
    seed: '000',
    tool: 'get_ticket',
    result: mirrored({ ok: true, data: { ticket_id: 'SUP-1042', status: 'open' }, error: null }, false),
    declared: {},
    outcome: 'ok',
    category: null,
  },
  {
    name: 'TICKET_NOT_FOUND (not_found) on a lookup',
    seed: '000',
    tool: 'get_ticket',
    result: mirrored({
      ok: false,
      data: null,
      error: {
        code: 'TICKET_NOT_FOUND',
        category: 'not_found',
        message: 'No support ticket exists with ID SUP-9999.',
        recoverable: true,
        suggested_action: 'Search tickets by customer or keyword.',
      },
    }),
    declared: { category: 'not_found', code: 'TICKET_NOT_FOUND' },
    outcome: 'tool_error',
    category: 'validation',
  },
  {
    name: 'searchSupportTickets MISSING_QUERY',
    seed: '000',
    tool: 'searchSupportTickets',
    result: mirrored({
      ok: false,
      data: null,
      error: {
        code: 'MISSING_QUERY',
        category: 'validation',
        message: 'query is required and must be a short, focused search phrase.',
        recoverable: true,
        automatic_retry_allowed: true,
      },
    }),
    declared: { category: 'validation', retryable: true, code: 'MISSING_QUERY' },
    outcome: 'tool_error',
    category: 'validation',
  },
  {
    name: 'searchSupportTickets NO_TICKETS_FOUND: empty-as-error',
    seed: '000',
    tool: 'searchSupportTickets',
    result: mirrored({
      ok: false,
      data: null,
      error: {
        code: 'NO_TICKETS_FOUND',
        category: 'not_found',
        message: 'No support tickets matched the query and filters.',
        recoverable: true,
        automatic_retry_allowed: false,
      },
    }),
    declared: { category: 'not_found', retryable: false, code: 'NO_TICKETS_FOUND' },
    outcome: 'tool_error',
    category: 'empty',
  },
  {
    name: 'searchSupportTickets SUPPORT_API_UNAVAILABLE (upstream)',
    seed: '000',
    tool: 'searchSupportTickets',
    result: mirrored({
      ok: false,
      data: null,
      error: {
        code: 'SUPPORT_API_UNAVAILABLE',
        category: 'upstream',
        message: 'The support ticket API is temporarily unavailable.',
        recoverable: true,
        automatic_retry_allowed: true,
        correlation_id: '0b9e6a53-1d5c-4e0e-9b5a-7f3f1e2d4c6b',
      },
    }),
    declared: { category: 'upstream', retryable: true, code: 'SUPPORT_API_UNAVAILABLE' },
    outcome: 'tool_error',
    category: 'transient',
  },
  {
    name: 'INVALID_DATE in the text block only',
    seed: '001',
    tool: 'search_tickets',
    result: {
      isError: true,
      content: [
        text({
          ok: false,
          error: {
            code: 'INVALID_DATE',
            category: 'validation',
            message: 'updated_after must be an ISO date in YYYY-MM-DD format.',
            recoverable: true,
            automatic_retry_allowed: true,
          },
        }),
      ],
    },
    declared: { category: 'validation', retryable: true, code: 'INVALID_DATE' },
    outcome: 'tool_error',
    category: 'validation',
  },
  {
    name: 'INTERNAL_ERROR (internal)',
    seed: '001',
    tool: 'process_refund',
    result: mirrored({
      ok: false,
      error: {
        code: 'INTERNAL_ERROR',
        category: 'internal',
        message: 'The operation failed due to an internal server error.',
        recoverable: true,
        automatic_retry_allowed: false,
        correlation_id: 'err_01HX8QR2J9',
      },
    }),
    declared: { category: 'internal', retryable: false, code: 'INTERNAL_ERROR' },
    outcome: 'tool_error',
    category: 'unknown',
  },
  {
    name: 'business with retriable:false and a customer explanation (REFUND_WINDOW_EXPIRED)',
    seed: '003',
    tool: 'process_refund',
    result: mirrored({
      errorCategory: 'business',
      retriable: false,
      code: 'REFUND_WINDOW_EXPIRED',
      customerExplanation:
        'This order was delivered on 12 March, which is outside our 30-day refund window. I can offer store credit or connect you with a specialist to review an exception.',
      suggestedNextAction: 'offer_store_credit_or_escalate',
    }),
    declared: { category: 'business', retryable: false, code: 'REFUND_WINDOW_EXPIRED' },
    outcome: 'tool_error',
    category: 'business',
  },
  {
    name: 'lookup_order transient with retryAfterMs',
    seed: '003',
    tool: 'lookup_order',
    result: mirrored({
      errorCategory: 'transient',
      isRetryable: true,
      message: 'Order service timed out after 5s.',
      retryAfterMs: 1000,
    }),
    declared: { category: 'transient', retryable: true, retryAfterMs: 1000 },
    outcome: 'tool_error',
    category: 'transient',
  },
  {
    name: 'lookup_order validation, isRetryable false',
    seed: '003',
    tool: 'lookup_order',
    result: mirrored({
      errorCategory: 'validation',
      isRetryable: false,
      message: "order_id must match ORD-<6 digits>; received 'last one'.",
      field: 'order_id',
    }),
    declared: { category: 'validation', retryable: false },
    outcome: 'tool_error',
    category: 'validation',
  },
  {
    name: 'lookup_order valid empty: no orders',
    seed: '003',
    tool: 'lookup_order',
    result: mirrored({ orders: [], message: 'Customer CUS-4471 has no orders.' }, false),
    declared: {},
    outcome: 'ok_empty',
    category: null,
  },
  {
    name: 'subagent partial report returned as a success',
    seed: '003',
    tool: 'delegate_web_research',
    // The seed's result has no isError at all.
    result: (({ isError: _absent, ...result }) => result)(
      mirrored(
        {
          status: 'partial',
          errorCategory: 'transient',
          isRetryable: true,
          message: 'Search provider rate-limited queries 3 and 7 after 3 local retries.',
          attempted: [
            '3 retries with exponential backoff (1s, 2s, 4s)',
            'fallback to cached results — none available',
          ],
          partialResults: {
            completedQueries: 6,
            totalQueries: 8,
            sources: ['src_101', 'src_102', 'src_105'],
          },
          alternatives: ['proceed with the 6 completed queries and flag reduced coverage'],
        },
        false,
      ),
    ),
    declared: { category: 'transient', retryable: true },
    outcome: 'ok',
    category: null,
    failureAsEmpty: true,
  },
  {
    name: 'MISSING_USER_CONFIRMATION (confirmation_required)',
    seed: '004',
    tool: 'process_refund',
    result: mirrored({
      ok: false,
      error: {
        code: 'MISSING_USER_CONFIRMATION',
        category: 'confirmation_required',
        requires_user_action: true,
        automatic_retry_allowed: false,
      },
    }),
    declared: { category: 'confirmation_required', retryable: false, code: 'MISSING_USER_CONFIRMATION' },
    outcome: 'tool_error',
    category: 'business',
  },
  {
    name: 'hidden failure: isError false with "ERROR: Permission denied"',
    seed: '004',
    tool: 'read_file',
    result: { isError: false, content: [text('ERROR: Permission denied')] },
    declared: {},
    outcome: 'ok',
    category: null,
    failureAsEmpty: true,
  },
  {
    name: 'hidden failure: structuredContent ok:false TICKET_NOT_FOUND without isError',
    seed: '004',
    tool: 'get_ticket',
    result: { content: [], structuredContent: { ok: false, error: { code: 'TICKET_NOT_FOUND' } } },
    declared: { code: 'TICKET_NOT_FOUND' },
    outcome: 'ok',
    category: null,
    failureAsEmpty: true,
  },
  {
    name: 'rate limited with retry_after_seconds',
    seed: '004',
    tool: 'search_web',
    result: mirrored({
      ok: false,
      error: { code: 'RATE_LIMITED', category: 'rate_limit', retry_after_seconds: 30 },
    }),
    declared: { category: 'rate_limit', code: 'RATE_LIMITED', retryAfterMs: 30_000 },
    outcome: 'tool_error',
    category: 'transient',
  },
  {
    name: 'BAD_INPUT with no category',
    seed: '004',
    tool: 'create_ticket',
    result: mirrored({ ok: false, error: { code: 'BAD_INPUT', message: 'Invalid.' } }),
    declared: { code: 'BAD_INPUT' },
    outcome: 'tool_error',
    category: 'validation',
  },
  {
    name: 'declared in _meta (namespaced keys)',
    seed: 'DOMAIN §1',
    tool: 'lookup_order',
    result: {
      isError: true,
      content: [text('Order service is throttled.')],
      _meta: {
        'com.example/errorCategory': 'throttled',
        'com.example/isRetryable': true,
        'com.example/retryAfterMs': 250,
      },
    },
    declared: { category: 'throttled', retryable: true, retryAfterMs: 250 },
    outcome: 'tool_error',
    category: 'transient',
  },
];
