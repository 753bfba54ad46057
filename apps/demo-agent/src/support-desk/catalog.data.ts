/** The support desk's fixed data: a handful of customers, orders, tickets and articles the scenarios use. */

export const REFUND_WINDOW_DAYS = 30;
export const AUTO_REFUND_LIMIT = 500;
/** Declared retry-after delays are small so that the demo, which honours them, stays fast. */
export const ORDER_SERVICE_RETRY_AFTER_MS = 200;
export const WEB_SEARCH_RETRY_AFTER_MS = 100;

export const ORDER_ID_FORMAT = /^#\d{5}$/;
export const CUSTOMER_ID_FORMAT = /^CUS-\d{4}$/;

export interface Order {
  readonly orderId: string;
  readonly customerId: string;
  readonly item: string;
  readonly total: number;
  readonly deliveredDaysAgo: number;
}

export interface Customer {
  readonly customerId: string;
  readonly name: string;
  readonly tier: 'standard' | 'plus';
  readonly customerSince: string;
}

const ordersList: Order[] = [
  {
    orderId: '#10482',
    customerId: 'CUS-1009',
    item: 'Noise-cancelling headphones',
    total: 120,
    deliveredDaysAgo: 12,
  },
  {
    orderId: '#10017',
    customerId: 'CUS-1009',
    item: 'Trail running shoes',
    total: 89.9,
    deliveredDaysAgo: 90,
  },
  { orderId: '#10750', customerId: 'CUS-2210', item: 'Standing desk', total: 750, deliveredDaysAgo: 6 },
  // Orders numbered #2xxxx live in the legacy warehouse system, whose lookups time out every other time.
  { orderId: '#20431', customerId: 'CUS-2210', item: 'Desk lamp', total: 35, deliveredDaysAgo: 20 },
];

export const ORDERS: ReadonlyMap<string, Order> = new Map(ordersList.map((order) => [order.orderId, order]));

export const isLegacyOrder = (orderId: string): boolean => orderId.startsWith('#2');

const customersList: Customer[] = [
  { customerId: 'CUS-1009', name: 'Ada Moreau', tier: 'plus', customerSince: '2021-04-02' },
  { customerId: 'CUS-2210', name: 'Kenji Okafor', tier: 'standard', customerSince: '2023-09-17' },
  { customerId: 'CUS-4471', name: 'Lena Varga', tier: 'standard', customerSince: '2026-01-05' },
];

export const CUSTOMERS: ReadonlyMap<string, Customer> = new Map(
  customersList.map((customer) => [customer.customerId, customer]),
);

export const ordersOf = (customerId: string): Order[] =>
  ordersList.filter((order) => order.customerId === customerId);

export interface Ticket {
  readonly ticket_id: string;
  readonly subject: string;
  readonly status: 'open' | 'pending' | 'solved' | 'closed';
}

export const TICKETS: readonly Ticket[] = [
  { ticket_id: 'SUP-1042', subject: 'Refund not received after return', status: 'open' },
  { ticket_id: 'SUP-1051', subject: 'Refund amount lower than expected', status: 'pending' },
  { ticket_id: 'SUP-1077', subject: 'Order stuck in legacy warehouse', status: 'solved' },
  { ticket_id: 'SUP-1090', subject: 'Login loop on mobile app', status: 'closed' },
];

export interface Article {
  readonly id: string;
  readonly title: string;
  readonly keywords: readonly string[];
}

export const ARTICLES: readonly Article[] = [
  { id: 'KB-201', title: 'Refund window and exceptions', keywords: ['refund', 'window', 'policy'] },
  { id: 'KB-202', title: 'Refunds above the automatic limit', keywords: ['refund', 'limit', 'policy'] },
  { id: 'KB-310', title: 'Order lookup errors and what they mean', keywords: ['order', 'lookup', 'errors'] },
  { id: 'KB-311', title: 'Legacy warehouse orders', keywords: ['order', 'legacy', 'warehouse'] },
];
