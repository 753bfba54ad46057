/**
 * Order tools. `lookup_order` and `process_refund` follow the seeds' contract: each failure kind has its own
 * category, retryability and stable code, business refusals carry a customer explanation, and a customer
 * without orders is a valid empty list. `create_shipping_label` is the seeds' anti-pattern on purpose: a bare
 * "Operation failed" that leaves the agent guessing.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AttemptCounter } from './attempt-counter';
import {
  AUTO_REFUND_LIMIT,
  CUSTOMER_ID_FORMAT,
  CUSTOMERS,
  isLegacyOrder,
  ORDER_ID_FORMAT,
  ORDER_SERVICE_RETRY_AFTER_MS,
  ORDERS,
  ordersOf,
  REFUND_WINDOW_DAYS,
  type Order,
} from './catalog.data';
import { money } from './money';
import { customerNotFound, invalidCustomerId, invalidOrderId, orderNotFound } from './order-errors';
import { contractError, structuredResult } from './tool-results';

const orderView = (order: Order) => ({ ...order, status: 'delivered' });

function lookupByCustomer(customerId: string): CallToolResult {
  if (!CUSTOMER_ID_FORMAT.test(customerId)) return invalidCustomerId(customerId);
  if (!CUSTOMERS.has(customerId)) return customerNotFound(customerId);
  const orders = ordersOf(customerId).map(orderView);
  // Seed 003: "no orders" is an answer, not a failure.
  return orders.length === 0
    ? structuredResult({ orders, message: `Customer ${customerId} has no orders.` })
    : structuredResult({ orders });
}

function lookupById(orderId: string, attempts: AttemptCounter): CallToolResult {
  if (!ORDER_ID_FORMAT.test(orderId)) return invalidOrderId(orderId);
  if (isLegacyOrder(orderId) && attempts.next(`lookup_order ${orderId}`) % 2 === 1) {
    return contractError({
      errorCategory: 'transient',
      isRetryable: true,
      code: 'ORDER_SERVICE_TIMEOUT',
      description: `The legacy warehouse order service timed out. The request is valid and may succeed if retried after ${ORDER_SERVICE_RETRY_AFTER_MS} ms.`,
      retryAfterMs: ORDER_SERVICE_RETRY_AFTER_MS,
    });
  }
  const order = ORDERS.get(orderId);
  return order === undefined ? orderNotFound(orderId) : structuredResult({ order: orderView(order) });
}

function processRefund(orderId: string, amount: number): CallToolResult {
  if (!ORDER_ID_FORMAT.test(orderId)) return invalidOrderId(orderId);
  const order = ORDERS.get(orderId);
  if (order === undefined) return orderNotFound(orderId);
  if (!(amount > 0 && amount <= order.total)) {
    return contractError({
      errorCategory: 'validation',
      isRetryable: true,
      code: 'INVALID_AMOUNT',
      description: `amount must be more than 0 and at most the order total of ${money(order.total)}; received ${amount}. Correct the amount and retry.`,
      field: 'amount',
      received: amount,
    });
  }
  if (order.deliveredDaysAgo > REFUND_WINDOW_DAYS) {
    return contractError({
      errorCategory: 'business',
      isRetryable: false,
      code: 'REFUND_WINDOW_EXPIRED',
      description: `Order ${orderId} was delivered ${order.deliveredDaysAgo} days ago, outside the ${REFUND_WINDOW_DAYS}-day refund window. Retrying will not succeed.`,
      customerExplanation: `This order was delivered ${order.deliveredDaysAgo} days ago, which is outside our ${REFUND_WINDOW_DAYS}-day refund window. I can offer store credit or connect you with a specialist to review an exception.`,
      suggestedNextAction: 'offer_store_credit_or_escalate',
    });
  }
  if (amount > AUTO_REFUND_LIMIT) {
    return contractError({
      errorCategory: 'business',
      isRetryable: false,
      code: 'REFUND_LIMIT_EXCEEDED',
      description: `The requested refund of ${money(amount)} exceeds the ${money(AUTO_REFUND_LIMIT)} automatic refund limit. Retrying will not succeed. Escalate to a manager for approval.`,
      customerExplanation: `Refunds above ${money(AUTO_REFUND_LIMIT)} need a manager's approval. I have passed your request for ${money(amount)} to a manager, who will get back to you within one business day.`,
      suggestedNextAction: 'escalate_to_manager',
    });
  }
  return structuredResult({
    refund: { refundId: `RF-${orderId.slice(1)}`, orderId, amount, status: 'approved' },
  });
}

export function registerOrderTools(server: McpServer, attempts: AttemptCounter): void {
  server.registerTool(
    'lookup_order',
    {
      title: 'Look up orders',
      description:
        'Looks up one order by its ID (#NNNNN) or every order of a customer (CUS-NNNN); give exactly one. ' +
        'A customer without orders is an empty list, not an error.',
      inputSchema: {
        order_id: z.string().optional().describe('Order ID in format #NNNNN, such as #12345'),
        customer_id: z.string().optional().describe('Customer ID in format CUS-NNNN'),
      },
      annotations: { readOnlyHint: true },
    },
    ({ order_id, customer_id }) => {
      if (order_id !== undefined && customer_id === undefined) return lookupById(order_id, attempts);
      if (customer_id !== undefined && order_id === undefined) return lookupByCustomer(customer_id);
      return contractError({
        errorCategory: 'validation',
        isRetryable: true,
        code: 'MISSING_LOOKUP_KEY',
        description: 'Give exactly one of order_id (#NNNNN) or customer_id (CUS-NNNN) and retry.',
        field: 'order_id',
      });
    },
  );

  server.registerTool(
    'process_refund',
    {
      title: 'Process a refund',
      description: `Refunds an order delivered within the last ${REFUND_WINDOW_DAYS} days, up to ${money(AUTO_REFUND_LIMIT)} without a manager's approval.`,
      inputSchema: {
        order_id: z.string().describe('Order ID in format #NNNNN'),
        amount: z.number().describe('Amount to refund, in dollars'),
        reason: z.string().optional().describe("The customer's reason"),
      },
      annotations: { destructiveHint: false, idempotentHint: false },
    },
    ({ order_id, amount }) => processRefund(order_id, amount),
  );

  server.registerTool(
    'create_shipping_label',
    {
      title: 'Create a return shipping label',
      description: 'Creates a prepaid return shipping label for an order.',
      inputSchema: { order_id: z.string().describe('Order ID in format #NNNNN') },
    },
    // The carrier integration is down, and this tool says so the way the seeds warn against: no category, no
    // retryability, nothing the agent can decide on.
    () => ({ isError: true, content: [{ type: 'text', text: 'Operation failed' }] }),
  );
}
