import { sql, type RawBuilder } from 'kysely';

/** A trace of a project; ids hex. */
export interface TraceRef {
  readonly projectId: number;
  readonly traceId: string;
}

/** One string per trace, for sets and maps of traces. */
export const traceKey = (trace: TraceRef): string => `${trace.projectId}:${trace.traceId}`;

/**
 * SQL: the row belongs to one of `traces`. One `project_id = … AND trace_id = ANY(…)` per project, so every
 * table keyed by (project_id, trace_id, …) answers with index scans however many traces a batch touches.
 */
export function inTraces(traces: readonly TraceRef[], alias?: string): RawBuilder<boolean> {
  const column = (name: string) => sql.ref(alias === undefined ? name : `${alias}.${name}`);
  const byProject = new Map<number, string[]>();
  for (const trace of traces)
    byProject.set(trace.projectId, [...(byProject.get(trace.projectId) ?? []), trace.traceId]);
  if (byProject.size === 0) return sql<boolean>`FALSE`;
  const conditions = [...byProject].map(
    ([projectId, traceIds]) =>
      sql`(${column('project_id')} = ${projectId}
           AND ${column('trace_id')} = ANY (ARRAY(SELECT decode(t, 'hex') FROM unnest(${traceIds}::text[]) AS t)))`,
  );
  return sql<boolean>`(${sql.join(conditions, sql` OR `)})`;
}
