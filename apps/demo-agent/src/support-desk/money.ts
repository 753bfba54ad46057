/** `$750`, `$89.90`: amounts as a customer reads them. */
export const money = (amount: number): string =>
  Number.isInteger(amount) ? `$${amount}` : `$${amount.toFixed(2)}`;
