/** Ordering and time formatting shared by the reports, so that their output is the same in every locale. */

/** Code-unit order, null first. */
export const compareText = (a: string | null, b: string | null): number =>
  a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1;

/** Nanoseconds since the epoch → ISO-8601 to the millisecond. */
export const isoFromNs = (ns: bigint): string => new Date(Number(ns / 1_000_000n)).toISOString();
