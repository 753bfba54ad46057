// The MCP server the benchmark calls and the calls it makes: an order-desk server with two tools, in the same
// process as the client, connected over InMemoryTransport. Loaded by the child only after the variant under test
// has installed its instrumentation, so every MCP SDK module is required here (CommonJS, through require hooks).
import { createRequire } from 'node:module';
import { ERROR_PERCENT } from './settings.mjs';

const require = createRequire(import.meta.url);

export const SERVER_INFO = { name: 'orders-mcp', version: '1.4.0' };
export const CLIENT_INFO = { name: 'bench-agent', version: '0.1.0' };

/** Seed 000's transient error (libs/domain seeds.spec.ts), as a flat JSON text block with isError. */
export const TIMEOUT_ERROR = {
  errorCategory: 'transient',
  isRetryable: true,
  description:
    'The order database timed out after 5 seconds. The request is valid and may succeed if retried after a short delay.',
};

const STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'cancelled'];
const CUSTOMERS = ['Ada Lovelace', 'Grace Hopper', 'Alan Turing', 'Katherine Johnson', 'Edsger Dijkstra'];

function order(orderId) {
  const n = Number(orderId.slice(1));
  const quantity = 1 + (n % 3);
  return {
    orderId,
    status: STATUSES[n % STATUSES.length],
    customer: { id: `cus_${40000 + (n % 977)}`, name: CUSTOMERS[n % CUSTOMERS.length], tier: 'gold' },
    items: [
      { sku: 'SKU-1042', name: 'USB-C cable 2 m', quantity, unitPrice: 9.99 },
      { sku: 'SKU-2210', name: 'Laptop stand, aluminium', quantity: 1, unitPrice: 39.5 },
    ],
    total: Math.round((quantity * 9.99 + 39.5) * 100) / 100,
    currency: 'EUR',
    placedAt: '2026-11-02T10:15:00.000Z',
    updatedAt: '2026-11-03T08:02:41.000Z',
  };
}

const mirrored = (payload) => ({
  content: [{ type: 'text', text: JSON.stringify(payload) }],
  structuredContent: payload,
});

/** `lookup_order`'s result: one order, or seed 000's transient error for ids #9xxxx (a shard that times out). */
export const lookupResult = (orderId) =>
  orderId.startsWith('#9')
    ? { isError: true, content: [{ type: 'text', text: JSON.stringify(TIMEOUT_ERROR) }] }
    : mirrored(order(orderId));

/** `search_orders`'s result: a page of up to three of the customer's orders. */
export function searchResult({ customerId, status, limit }) {
  const base = Number(customerId.slice(4));
  const orders = Array.from({ length: Math.min(limit, 3) }, (_, i) => {
    const { orderId, total } = order(`#${10000 + ((base + i * 31) % 80000)}`);
    return { orderId, status, total };
  });
  return mirrored({ orders, total: orders.length, nextCursor: null });
}

/**
 * The server: `lookup_order` (one order; ids #9xxxx live on a shard whose database times out, answered with the
 * seed's transient error) and `search_orders` (a page of three orders). Successful results are structuredContent
 * mirrored as a JSON text block, validated against the tools' output schemas on both sides.
 */
function createServer() {
  const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
  const { z } = require('zod');
  const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} } });
  const orderShape = {
    orderId: z.string(),
    status: z.enum(STATUSES),
    customer: z.object({ id: z.string(), name: z.string(), tier: z.string() }),
    items: z.array(
      z.object({ sku: z.string(), name: z.string(), quantity: z.number().int(), unitPrice: z.number() }),
    ),
    total: z.number(),
    currency: z.string(),
    placedAt: z.string(),
    updatedAt: z.string(),
  };
  server.registerTool(
    'lookup_order',
    {
      description: 'Look up one order by its id (#NNNNN).',
      inputSchema: { orderId: z.string().regex(/^#\d{5}$/) },
      outputSchema: orderShape,
    },
    async ({ orderId }) => lookupResult(orderId),
  );
  server.registerTool(
    'search_orders',
    {
      description: "Search a customer's orders by status.",
      inputSchema: {
        customerId: z.string(),
        status: z.enum(STATUSES),
        limit: z.number().int().min(1).max(50),
      },
      outputSchema: {
        orders: z.array(z.object({ orderId: z.string(), status: z.string(), total: z.number() })),
        total: z.number().int(),
        nextCursor: z.string().nullable(),
      },
    },
    async (args) => searchResult(args),
  );
  return server;
}

export const isErrorCall = (i) => (i * 7919) % 100 < ERROR_PERCENT;

/**
 * Call i of every run: exactly ERROR_PERCENT errors in every 100 consecutive calls, spread out (7919 is prime);
 * of the successes, two lookups for every search.
 */
export function callParams(i) {
  if (isErrorCall(i)) {
    return { name: 'lookup_order', arguments: { orderId: `#9${String(i % 10000).padStart(4, '0')}` } };
  }
  if (i % 3 === 2) {
    return {
      name: 'search_orders',
      arguments: { customerId: `cus_${40000 + (i % 977)}`, status: STATUSES[i % STATUSES.length], limit: 3 },
    };
  }
  return { name: 'lookup_order', arguments: { orderId: `#${10000 + (i % 80000)}` } };
}

/**
 * Server and client connected over a linked InMemoryTransport pair; the client has listed the tools (as an agent
 * does, and so it validates structuredContent against their output schemas). The hooks come from the variant:
 * `onClientClass` sees the Client class once it is loaded, `instrumentClient` the new client before it connects.
 */
export async function connectPair({ onClientClass, instrumentClient = (client) => client }) {
  const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
  const { InMemoryTransport } = require('@modelcontextprotocol/sdk/inMemory.js');
  const instrumentedVia = onClientClass(Client);
  const server = createServer();
  const client = instrumentClient(new Client(CLIENT_INFO));
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  await client.connect(clientTransport);
  const { tools } = await client.listTools();
  if (tools.length !== 2) throw new Error(`expected 2 tools, the server lists ${tools.length}`);
  return { client, server, instrumentedVia };
}
