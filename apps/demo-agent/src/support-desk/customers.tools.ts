/** `get_customer_records`: financial records need a permission the support agent does not have (seed 000). */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { CUSTOMER_ID_FORMAT, CUSTOMERS, ordersOf } from './catalog.data';
import { customerNotFound, invalidCustomerId } from './order-errors';
import { contractError, structuredResult } from './tool-results';

const RECORD_TYPES = ['profile', 'orders', 'financial'];

function customerRecords(customerId: string, recordType: string): CallToolResult {
  if (!CUSTOMER_ID_FORMAT.test(customerId)) return invalidCustomerId(customerId);
  const customer = CUSTOMERS.get(customerId);
  if (customer === undefined) return customerNotFound(customerId);
  switch (recordType) {
    case 'profile':
      return structuredResult({ customer });
    case 'orders':
      return structuredResult({ orders: ordersOf(customerId) });
    case 'financial':
      return contractError({
        errorCategory: 'permission',
        isRetryable: false,
        code: 'PERMISSION_DENIED',
        description:
          'The current user does not have permission to access financial records. Request elevated access or escalate to a user with financial-system permissions.',
      });
    default:
      return contractError({
        errorCategory: 'validation',
        isRetryable: true,
        code: 'INVALID_RECORD_TYPE',
        description: `record_type must be one of ${RECORD_TYPES.join(', ')}; received '${recordType}'. Correct it and retry.`,
        field: 'record_type',
        expected: RECORD_TYPES.join(' | '),
        received: recordType,
      });
  }
}

export function registerCustomerTools(server: McpServer): void {
  server.registerTool(
    'get_customer_records',
    {
      title: 'Get customer records',
      description: `Returns a customer's records of one type: ${RECORD_TYPES.join(', ')}.`,
      inputSchema: {
        customer_id: z.string().describe('Customer ID in format CUS-NNNN'),
        record_type: z.string().describe(RECORD_TYPES.join(' | ')),
      },
      annotations: { readOnlyHint: true },
    },
    ({ customer_id, record_type }) => customerRecords(customer_id, record_type),
  );
}
