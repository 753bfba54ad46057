/**
 * The customer-support conversations of seeds 000 and 003, one agent run each, against the support-desk server:
 * a malformed order id, an order service timeout, a customer without orders, refunds the policy refuses, records
 * the agent may not see, account notes whose denial comes back as a successful result, a search that finds
 * nothing, and a tool that only says "Operation failed".
 */
import { withAgentRun } from '@errata/sdk';
import type { ToolCallRecord } from '../agent/tool-call';
import type { McpSession } from '../mcp/mcp-session';
import type { ToolStep } from '../policies/agent-policy';
import type { EpisodeContext } from './episode-context';
import { playTasks } from './play-steps';

export interface SupportScenario {
  readonly id: string;
  readonly tasks: (desk: McpSession) => ToolStep[][];
}

/** What a model does with "Order ID must be in format #NNNNN … Received 'order-10482'": keep the digits. */
function reformatOrderId(failure: ToolCallRecord): Record<string, unknown> | null {
  if (failure.declared.code !== 'INVALID_ORDER_ID') return null;
  const digits = String(failure.args['order_id']).replace(/\D/g, '');
  return digits.length === 5 ? { ...failure.args, order_id: `#${digits}` } : null;
}

export const SUPPORT_SCENARIOS: readonly SupportScenario[] = [
  {
    id: 'order-status-malformed-id',
    tasks: (desk) => [
      [{ session: desk, tool: 'lookup_order', args: { order_id: 'order-10482' }, correct: reformatOrderId }],
    ],
  },
  {
    id: 'legacy-order-timeout',
    tasks: (desk) => [
      [
        { session: desk, tool: 'lookup_order', args: { order_id: '#20431' } },
        {
          session: desk,
          tool: 'process_refund',
          args: { order_id: '#20431', amount: 35, reason: 'arrived broken' },
        },
      ],
    ],
  },
  {
    id: 'customer-without-orders',
    tasks: (desk) => [[{ session: desk, tool: 'lookup_order', args: { customer_id: 'CUS-4471' } }]],
  },
  {
    id: 'refund-outside-window',
    tasks: (desk) => [
      [
        {
          session: desk,
          tool: 'process_refund',
          args: { order_id: '#10017', amount: 89.9, reason: 'too small' },
        },
      ],
    ],
  },
  {
    id: 'refund-over-limit',
    tasks: (desk) => [
      [
        {
          session: desk,
          tool: 'process_refund',
          args: { order_id: '#10750', amount: 750, reason: 'wobbly desk' },
        },
      ],
    ],
  },
  {
    id: 'financial-records',
    tasks: (desk) => [
      [
        {
          session: desk,
          tool: 'get_customer_records',
          args: { customer_id: 'CUS-1009', record_type: 'financial' },
        },
      ],
    ],
  },
  {
    id: 'account-notes',
    tasks: (desk) => [[{ session: desk, tool: 'get_account_notes', args: { customer_id: 'CUS-1009' } }]],
  },
  {
    id: 'ticket-search',
    tasks: (desk) => [
      [
        { session: desk, tool: 'search_tickets', args: { query: 'refund' } },
        { session: desk, tool: 'search_tickets', args: { query: 'SSO timeout after redirect' } },
      ],
    ],
  },
  {
    id: 'return-label',
    tasks: (desk) => [[{ session: desk, tool: 'create_shipping_label', args: { order_id: '#10482' } }]],
  },
];

export function playSupportScenario(scenario: SupportScenario, context: EpisodeContext): Promise<unknown> {
  const { policy, episode, servers, tally, interruption } = context;
  return withAgentRun(
    { name: 'support-agent', id: policy.name, conversationId: `${policy.name}-${episode}-${scenario.id}` },
    () => playTasks(policy, scenario.tasks(servers.supportDesk), { inSubagent: false, tally, interruption }),
  );
}
