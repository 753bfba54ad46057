/** The validation errors the order and customer tools share. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { contractError } from './tool-results';

export const invalidOrderId = (received: string): CallToolResult =>
  contractError({
    errorCategory: 'validation',
    isRetryable: true,
    code: 'INVALID_ORDER_ID',
    description: `Order ID must be in format #NNNNN, such as #12345. Received '${received}'. Reformat the order ID and retry.`,
    field: 'order_id',
    expected: '#NNNNN',
    received,
  });

export const orderNotFound = (orderId: string): CallToolResult =>
  contractError({
    errorCategory: 'validation',
    isRetryable: true,
    code: 'ORDER_NOT_FOUND',
    description: `No order has ID ${orderId}. Check the order number with the customer and retry.`,
    field: 'order_id',
    received: orderId,
  });

export const invalidCustomerId = (received: string): CallToolResult =>
  contractError({
    errorCategory: 'validation',
    isRetryable: true,
    code: 'INVALID_CUSTOMER_ID',
    description: `Customer ID must be in format CUS-NNNN, such as CUS-1234. Received '${received}'. Reformat the customer ID and retry.`,
    field: 'customer_id',
    expected: 'CUS-NNNN',
    received,
  });

export const customerNotFound = (customerId: string): CallToolResult =>
  contractError({
    errorCategory: 'validation',
    isRetryable: true,
    code: 'CUSTOMER_NOT_FOUND',
    description: `No customer has ID ${customerId}. Check the customer ID and retry.`,
    field: 'customer_id',
    received: customerId,
  });
