/** A figure for the benchmarks' output: US digit grouping, `digits` decimals. */
export const fmt = (n, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
