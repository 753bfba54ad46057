import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The built support-desk MCP server of the demo (`npm run build`), over stdio, driven by the official client. */
const SUPPORT_DESK = join(__dirname, '../apps/demo-agent/dist/support-desk/main.js');

/** The seeds' envelope: the payload as structuredContent, mirrored as JSON in the only text block. */
const mirrored = (isError: boolean, payload: Record<string, unknown>) => ({
  isError,
  content: [{ type: 'text', text: JSON.stringify(payload) }],
  structuredContent: payload,
});

describe('support-desk MCP server', () => {
  let client: Client;
  const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });

  beforeAll(async () => {
    client = new Client({ name: 'support-desk-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [SUPPORT_DESK], stderr: 'ignore' }),
    );
  });
  afterAll(() => client?.close());

  it('introduces itself and lists the scenario tools', async () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'support-desk', version: '1.0.0' });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'create_shipping_label',
      'get_account_notes',
      'get_customer_records',
      'lookup_order',
      'process_refund',
      'search_knowledge_base',
      'search_news',
      'search_tickets',
      'search_web',
    ]);
  });

  describe('lookup_order', () => {
    it('answers a malformed order id with a validation error that says how to fix it', async () => {
      expect(await call('lookup_order', { order_id: 'order-10482' })).toEqual(
        mirrored(true, {
          errorCategory: 'validation',
          isRetryable: true,
          code: 'INVALID_ORDER_ID',
          description:
            "Order ID must be in format #NNNNN, such as #12345. Received 'order-10482'. Reformat the order ID and retry.",
          field: 'order_id',
          expected: '#NNNNN',
          received: 'order-10482',
        }),
      );
    });

    it('finds an order by id', async () => {
      expect(await call('lookup_order', { order_id: '#10482' })).toEqual(
        mirrored(false, {
          order: {
            orderId: '#10482',
            customerId: 'CUS-1009',
            item: 'Noise-cancelling headphones',
            total: 120,
            deliveredDaysAgo: 12,
            status: 'delivered',
          },
        }),
      );
    });

    it('times out every other lookup of a legacy-warehouse order, with a retry-after', async () => {
      const timeout = mirrored(true, {
        errorCategory: 'transient',
        isRetryable: true,
        code: 'ORDER_SERVICE_TIMEOUT',
        description:
          'The legacy warehouse order service timed out. The request is valid and may succeed if retried after 200 ms.',
        retryAfterMs: 200,
      });
      const found = mirrored(false, {
        order: {
          orderId: '#20431',
          customerId: 'CUS-2210',
          item: 'Desk lamp',
          total: 35,
          deliveredDaysAgo: 20,
          status: 'delivered',
        },
      });
      const lookups = [];
      for (let i = 0; i < 4; i++) lookups.push(await call('lookup_order', { order_id: '#20431' }));
      expect(lookups).toEqual([timeout, found, timeout, found]);
    });

    it('answers a customer without orders with a valid empty list, not an error', async () => {
      expect(await call('lookup_order', { customer_id: 'CUS-4471' })).toEqual(
        mirrored(false, { orders: [], message: 'Customer CUS-4471 has no orders.' }),
      );
    });

    it("lists a customer's orders", async () => {
      const result = await call('lookup_order', { customer_id: 'CUS-1009' });
      expect(result.isError).toBe(false);
      expect(
        (result.structuredContent as { orders: { orderId: string }[] }).orders.map((o) => o.orderId),
      ).toEqual(['#10482', '#10017']);
    });

    it('asks for exactly one lookup key', async () => {
      expect(await call('lookup_order', {})).toEqual(
        mirrored(true, {
          errorCategory: 'validation',
          isRetryable: true,
          code: 'MISSING_LOOKUP_KEY',
          description: 'Give exactly one of order_id (#NNNNN) or customer_id (CUS-NNNN) and retry.',
          field: 'order_id',
        }),
      );
    });
  });

  describe('process_refund', () => {
    it('refuses a refund outside the 30-day window as a business error with a customer explanation', async () => {
      expect(await call('process_refund', { order_id: '#10017', amount: 89.9 })).toEqual(
        mirrored(true, {
          errorCategory: 'business',
          isRetryable: false,
          code: 'REFUND_WINDOW_EXPIRED',
          description:
            'Order #10017 was delivered 90 days ago, outside the 30-day refund window. Retrying will not succeed.',
          customerExplanation:
            'This order was delivered 90 days ago, which is outside our 30-day refund window. I can offer store credit or connect you with a specialist to review an exception.',
          suggestedNextAction: 'offer_store_credit_or_escalate',
        }),
      );
    });

    it('refuses a refund over the automatic limit and says a manager must approve it', async () => {
      expect(await call('process_refund', { order_id: '#10750', amount: 750 })).toEqual(
        mirrored(true, {
          errorCategory: 'business',
          isRetryable: false,
          code: 'REFUND_LIMIT_EXCEEDED',
          description:
            'The requested refund of $750 exceeds the $500 automatic refund limit. Retrying will not succeed. Escalate to a manager for approval.',
          customerExplanation:
            "Refunds above $500 need a manager's approval. I have passed your request for $750 to a manager, who will get back to you within one business day.",
          suggestedNextAction: 'escalate_to_manager',
        }),
      );
    });

    it('refunds an order within the window and the limit', async () => {
      expect(
        await call('process_refund', { order_id: '#20431', amount: 35, reason: 'arrived broken' }),
      ).toEqual(
        mirrored(false, {
          refund: { refundId: 'RF-20431', orderId: '#20431', amount: 35, status: 'approved' },
        }),
      );
    });

    it('rejects an amount above the order total as a validation error', async () => {
      expect(await call('process_refund', { order_id: '#10482', amount: 150 })).toEqual(
        mirrored(true, {
          errorCategory: 'validation',
          isRetryable: true,
          code: 'INVALID_AMOUNT',
          description:
            'amount must be more than 0 and at most the order total of $120; received 150. Correct the amount and retry.',
          field: 'amount',
          received: 150,
        }),
      );
    });
  });

  describe('get_customer_records', () => {
    it('denies financial records as a permission error that must not be retried', async () => {
      expect(
        await call('get_customer_records', { customer_id: 'CUS-1009', record_type: 'financial' }),
      ).toEqual(
        mirrored(true, {
          errorCategory: 'permission',
          isRetryable: false,
          code: 'PERMISSION_DENIED',
          description:
            'The current user does not have permission to access financial records. Request elevated access or escalate to a user with financial-system permissions.',
        }),
      );
    });

    it('returns the profile', async () => {
      expect(await call('get_customer_records', { customer_id: 'CUS-4471', record_type: 'profile' })).toEqual(
        mirrored(false, {
          customer: {
            customerId: 'CUS-4471',
            name: 'Lena Varga',
            tier: 'standard',
            customerSince: '2026-01-05',
          },
        }),
      );
    });
  });

  describe('get_account_notes (seed 000 practice question 4, failure-as-empty on purpose)', () => {
    it("hides the denial of a restricted account's notes in a successful result", async () => {
      expect(await call('get_account_notes', { customer_id: 'CUS-1009' })).toEqual({
        isError: false,
        content: [{ type: 'text', text: 'ERROR: Permission denied' }],
      });
    });

    it('returns the notes of other accounts, an empty list included', async () => {
      expect(await call('get_account_notes', { customer_id: 'CUS-2210' })).toEqual(
        mirrored(false, {
          customerId: 'CUS-2210',
          notes: ['Prefers e-mail over phone.', 'Asked about bulk discounts in October.'],
        }),
      );
      expect(await call('get_account_notes', { customer_id: 'CUS-4471' })).toEqual(
        mirrored(false, { customerId: 'CUS-4471', notes: [] }),
      );
    });

    it('answers an unknown or malformed customer id with the same contract errors as get_customer_records', async () => {
      for (const [customer_id, code] of [
        ['CUS-0000', 'CUSTOMER_NOT_FOUND'],
        ['customer 7', 'INVALID_CUSTOMER_ID'],
      ]) {
        const notes = await call('get_account_notes', { customer_id });
        expect(notes).toMatchObject({
          isError: true,
          structuredContent: { errorCategory: 'validation', code },
        });
        expect(notes).toEqual(await call('get_customer_records', { customer_id, record_type: 'profile' }));
      }
    });
  });

  describe('search_tickets (seed 000, empty-as-error on purpose)', () => {
    it('returns matching tickets in the ok/data/error envelope', async () => {
      expect(await call('search_tickets', { query: 'refund' })).toEqual(
        mirrored(false, {
          ok: true,
          data: {
            tickets: [
              { ticket_id: 'SUP-1042', subject: 'Refund not received after return', status: 'open' },
              { ticket_id: 'SUP-1051', subject: 'Refund amount lower than expected', status: 'pending' },
            ],
            result_count: 2,
            truncated: false,
          },
          error: null,
        }),
      );
    });

    it('reports a search without matches as an error (NO_TICKETS_FOUND)', async () => {
      expect(await call('search_tickets', { query: 'SSO timeout after redirect' })).toEqual(
        mirrored(true, {
          ok: false,
          data: null,
          error: {
            code: 'NO_TICKETS_FOUND',
            category: 'not_found',
            message: 'No support tickets matched the query and filters.',
            recoverable: true,
            automatic_retry_allowed: false,
            suggested_action: 'Ask the user for another keyword, customer, date range, or broader filter.',
          },
        }),
      );
    });

    it('rejects a blank query as a validation error with example arguments', async () => {
      const result = await call('search_tickets', { query: '  ' });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({
        ok: false,
        error: {
          code: 'MISSING_QUERY',
          category: 'validation',
          automatic_retry_allowed: true,
          example_arguments: { query: 'refund not received', status: 'any', maxResults: 5 },
        },
      });
    });
  });

  it('create_shipping_label fails with a bare "Operation failed" and nothing to decide on', async () => {
    expect(await call('create_shipping_label', { order_id: '#10482' })).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'Operation failed' }],
    });
  });

  describe('research sources', () => {
    it('search_knowledge_base returns articles, and a valid empty list when nothing matches', async () => {
      expect(await call('search_knowledge_base', { query: 'refund window policy' })).toEqual(
        mirrored(false, {
          articles: [
            { id: 'KB-201', title: 'Refund window and exceptions' },
            { id: 'KB-202', title: 'Refunds above the automatic limit' },
          ],
          resultCount: 2,
        }),
      );
      expect(await call('search_knowledge_base', { query: 'gift cards' })).toEqual(
        mirrored(false, { articles: [], resultCount: 0 }),
      );
    });

    it('search_web rate-limits competitor queries every time, and queries for the latest data every other time', async () => {
      const rateLimited = mirrored(true, {
        errorCategory: 'transient',
        isRetryable: true,
        code: 'RATE_LIMITED',
        description:
          'The search provider rate-limited this query. The request is valid and may succeed if retried after 100 ms.',
        retryAfterMs: 100,
      });
      const competitor = { query: 'competitor refund policies' };
      expect([await call('search_web', competitor), await call('search_web', competitor)]).toEqual([
        rateLimited,
        rateLimited,
      ]);
      const latest = { query: 'latest MCP news' };
      const answers = [await call('search_web', latest), await call('search_web', latest)];
      expect(answers[0]).toEqual(rateLimited);
      expect(answers[1]).toEqual(
        mirrored(false, {
          results: [1, 2, 3].map((i) => ({
            title: `latest MCP news (source ${i})`,
            url: `https://example.org/latest-mcp-news/${i}`,
          })),
          resultCount: 3,
        }),
      );
    });

    it('search_news hides its failure: isError false and "No results found."', async () => {
      expect(await call('search_news', { query: 'competitor press releases' })).toEqual({
        isError: false,
        content: [{ type: 'text', text: 'No results found.' }],
      });
    });
  });
});
