/**
 * The read models keep counts (a retry's attempt, a declared retry-after, tokens, a subagent report's units of work)
 * in PostgreSQL `integer` columns. The event log takes any safe integer a runtime sends; a count beyond the column's
 * range would fail every projection batch that holds it, and with it the reports of every project. It is read as
 * unknown instead, as an attribute of the wrong type is; the event keeps what was sent.
 */
const INTEGER_MIN = -(2 ** 31);
const INTEGER_MAX = 2 ** 31 - 1;

export function integerOrNull(value: number | null): number | null {
  return value !== null && value >= INTEGER_MIN && value <= INTEGER_MAX ? value : null;
}
