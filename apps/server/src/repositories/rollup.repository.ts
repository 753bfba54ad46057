import { Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../database/schema';
import { timestampFromMicros } from '../database/timestamps';
import { dimensionSources, list, measureType, ROLLUPS, type RollupShape } from './rollup-shapes';
import { inTraces, type TraceRef } from './trace-ref';

/** A `contribution` row as the projection builds it: ids hex, start as microseconds and nanoseconds. */
export interface ContributionRow {
  readonly projectId: number;
  readonly traceId: string;
  readonly spanId: string;
  readonly kind: 'call' | 'finding' | 'report';
  readonly part: string;
  readonly startMicros: number;
  readonly startNs: string;
  readonly server: string | null;
  readonly tool: string | null;
  readonly serverVersion: string | null;
  readonly category: string | null;
  readonly evidence: string | null;
  readonly agentName: string | null;
  readonly agentId: string | null;
  readonly runId: string | null;
  readonly measures: Readonly<Record<string, number>>;
}

/**
 * Writes of the contributions and their rollups. The projector re-derives whole traces: it takes their stored
 * contributions out of the rollups, replaces them, and adds the new ones back, in its batch's transaction.
 */
@Injectable()
export class RollupRepository {
  /** Adds (1) or takes away (-1) the stored contributions of `traces` to or from every rollup, hourly and daily. */
  async apply(db: Kysely<DB>, traces: readonly TraceRef[], sign: 1 | -1): Promise<void> {
    if (traces.length === 0) return;
    for (const shape of ROLLUPS) await this.applyTo(db, shape, traces, sign);
  }

  async replaceContributions(
    db: Kysely<DB>,
    traces: readonly TraceRef[],
    rows: readonly ContributionRow[],
  ): Promise<void> {
    if (traces.length > 0) {
      await sql`DELETE FROM contribution WHERE ${inTraces(traces)}`.execute(db);
    }
    // Bounded statements: a trace set can hold hundreds of thousands of contributions.
    for (let at = 0; at < rows.length; at += 5_000) {
      const batch = JSON.stringify(
        rows
          .slice(at, at + 5_000)
          .map((r) => [
            r.projectId,
            r.traceId,
            r.spanId,
            r.kind,
            r.part,
            r.startMicros,
            r.startNs,
            r.server,
            r.tool,
            r.serverVersion,
            r.category,
            r.evidence,
            r.agentName,
            r.agentId,
            r.runId,
            r.measures,
          ]),
      );
      await sql`
        INSERT INTO contribution (project_id, trace_id, span_id, kind, part, start_time, start_ns, server, tool,
                                  server_version, category, evidence, agent_name, agent_id, run_id, measures)
        SELECT (r->>0)::int, decode(r->>1, 'hex'), decode(r->>2, 'hex'), r->>3, r->>4,
               ${timestampFromMicros(sql`(r->>5)::bigint`)}, (r->>6)::bigint, r->>7, r->>8, r->>9, r->>10, r->>11,
               r->>12, r->>13, r->>14, r->15
          FROM jsonb_array_elements(${batch}::jsonb) AS r`.execute(db);
    }
  }

  /** Empties the contributions and rollups, for a rebuild inside the caller's transaction. */
  async truncate(db: Kysely<DB>): Promise<void> {
    await sql`TRUNCATE contribution, call_rollup, finding_rollup, report_rollup`.execute(db);
  }

  private async applyTo(db: Kysely<DB>, shape: RollupShape, traces: readonly TraceRef[], sign: 1 | -1) {
    const dimensions = shape.dimensions.map(([column]) => column);
    const key = ['project_id', 'bucket_hours', 'bucket'];
    const withoutAgent = dimensions.filter((d) => !AGENT_DIMENSIONS.includes(d));
    const sums = list(
      shape.measures.map((m) => `${sign} * coalesce(sum((s.measures->>'${m}')::${measureType(m)}), 0)`),
    );
    const updates = list(shape.measures.map((m) => `${m} = ${shape.table}.${m} + excluded.${m}`));
    await sql`
      INSERT INTO ${sql.table(shape.table)} (${list(key)}, by_agent, ${list(dimensions)}, ${list(shape.measures)})
      SELECT ${list(key.map((k) => `s.${k}`))}, GROUPING(s.agent_name) = 0, ${list(dimensions.map((d) => `s.${d}`))}, ${sums}
        FROM (SELECT c.project_id, w.hours AS bucket_hours,
                     date_trunc(CASE w.hours WHEN 24 THEN 'day' ELSE 'hour' END, c.start_time, 'UTC') AS bucket,
                     ${dimensionSources(shape)}, c.measures
                FROM contribution c CROSS JOIN (VALUES (1::smallint), (24::smallint)) AS w (hours)
               WHERE c.kind = ${shape.kind} AND ${inTraces(traces, 'c')}) AS s
       GROUP BY GROUPING SETS ((${list([...key, ...dimensions].map((d) => `s.${d}`))}),
                               (${list([...key, ...withoutAgent].map((d) => `s.${d}`))}))
      ON CONFLICT ON CONSTRAINT ${sql.raw(`${shape.table}_key`)} DO UPDATE SET ${updates}`.execute(db);
  }
}

/** Rollup rows come per agent and summed over all agents: reports without an agent filter read the latter. */
const AGENT_DIMENSIONS = ['agent_name', 'agent_id'];
