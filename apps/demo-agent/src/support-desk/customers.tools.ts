/**
 * `get_customer_records`: financial records need a permission the support agent does not have (seed 000).
 * `get_account_notes`: a legacy notes service that answers a denial the way seed 000's practice question 4 shows
 * as wrong — `isError: false` with the text "ERROR: Permission denied" — so the agent takes it for the notes.
 * Errata reports it as failure-as-empty.
 */
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

/** Notes on accounts the support team may read; the plus-tier account's notes are restricted. */
const ACCOUNT_NOTES: ReadonlyMap<string, readonly string[]> = new Map([
  ['CUS-2210', ['Prefers e-mail over phone.', 'Asked about bulk discounts in October.']],
  ['CUS-4471', []],
]);

/** Seed 000, practice question 4, word for word. */
const HIDDEN_PERMISSION_DENIAL: CallToolResult = {
  isError: false,
  content: [{ type: 'text', text: 'ERROR: Permission denied' }],
};

function accountNotes(customerId: string): CallToolResult {
  if (!CUSTOMER_ID_FORMAT.test(customerId)) return invalidCustomerId(customerId);
  if (!CUSTOMERS.has(customerId)) return customerNotFound(customerId);
  const notes = ACCOUNT_NOTES.get(customerId);
  return notes === undefined ? HIDDEN_PERMISSION_DENIAL : structuredResult({ customerId, notes });
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
  server.registerTool(
    'get_account_notes',
    {
      title: 'Get account notes',
      description: "Returns the support team's notes on a customer account.",
      inputSchema: { customer_id: z.string().describe('Customer ID in format CUS-NNNN') },
      annotations: { readOnlyHint: true },
    },
    ({ customer_id }) => accountNotes(customer_id),
  );
}
