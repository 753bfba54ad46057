import type { ContributionKey, ContributionRow, StoredContribution } from '../repositories/rollup.repository';

/** What a re-derivation changes in the stored contributions of its traces. */
export interface ContributionChanges {
  /** Stored rows the derivation no longer gives as they are: taken out of the rollups, then deleted. */
  readonly gone: ContributionKey[];
  /** Derived rows not stored as they are: inserted, then added to the rollups. */
  readonly fresh: ContributionRow[];
}

/**
 * The difference between the contributions stored for some traces and those a derivation of the same traces gives.
 * Writing only it leaves the contributions exactly as replacing them all would, and the rollups too: they are sums of
 * the contributions in exact arithmetic (bigint, numeric), so taking out and adding back an unchanged row is no
 * change. A trace that keeps growing (a session's, for hours) then costs its batches the rows its new spans changed,
 * not all of its rows again. A row counts as unchanged when every column is equal (its start time follows from
 * `startNs`, and its measures are compared whatever their key order: jsonb orders keys its own way).
 */
export function contributionChanges(
  stored: readonly StoredContribution[],
  derived: readonly ContributionRow[],
): ContributionChanges {
  // By span id, then a scan of that span's few rows: a key string built and hashed for every row of both sides cost
  // more than the comparison itself.
  const storedBySpan = new Map<string, number[]>();
  stored.forEach((row, i) => {
    const rows = storedBySpan.get(row.spanId);
    if (rows === undefined) storedBySpan.set(row.spanId, [i]);
    else rows.push(i);
  });
  const matched = new Array<boolean>(stored.length).fill(false);
  const fresh: ContributionRow[] = [];
  for (const row of derived) {
    const i = storedBySpan.get(row.spanId)?.find((s) => !matched[s] && sameKey(stored[s]!, row));
    if (i !== undefined && sameContent(stored[i]!, row)) matched[i] = true;
    else fresh.push(row);
  }
  // What is left was not derived again as it is.
  return { gone: stored.filter((_, i) => !matched[i]), fresh };
}

const sameKey = (a: ContributionKey, b: ContributionKey): boolean =>
  a.projectId === b.projectId &&
  a.traceId === b.traceId &&
  a.spanId === b.spanId &&
  a.kind === b.kind &&
  a.part === b.part;

/** Field by field: this runs for every row of a long trace at every batch, where building strings cost seconds. */
function sameContent(a: StoredContribution, b: ContributionRow): boolean {
  return (
    a.startNs === b.startNs &&
    a.server === b.server &&
    a.tool === b.tool &&
    a.serverVersion === b.serverVersion &&
    a.category === b.category &&
    a.evidence === b.evidence &&
    a.agentName === b.agentName &&
    a.agentId === b.agentId &&
    a.runId === b.runId &&
    sameMeasures(a.measures, b.measures)
  );
}

function sameMeasures(a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>): boolean {
  let count = 0;
  for (const measure in a) {
    if (a[measure] !== b[measure]) return false;
    count++;
  }
  for (const _ in b) count--;
  return count === 0;
}
