import { Injectable } from '@nestjs/common';
import { sql, type Kysely, type RawBuilder } from 'kysely';
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

/** A `contribution` row's primary key. */
export type ContributionKey = Pick<ContributionRow, 'projectId' | 'traceId' | 'spanId' | 'kind' | 'part'>;

/** A stored `contribution` row, every column but `start_time` (which follows from `start_ns`). */
export type StoredContribution = Omit<ContributionRow, 'startMicros'>;

/** Bounded statements: a trace set can hold hundreds of thousands of contributions. */
const ROWS_PER_STATEMENT = 5_000;

/**
 * Writes of the contributions and their rollups. The projector re-derives whole traces and writes what changed: the
 * stored rows it no longer gives are taken out of the rollups and deleted, the rows it gives anew are inserted and
 * added to them, in its batch's transaction.
 */
@Injectable()
export class RollupRepository {
  /** The stored contributions of `traces`. */
  async storedContributions(db: Kysely<DB>, traces: readonly TraceRef[]): Promise<StoredContribution[]> {
    if (traces.length === 0) return [];
    const { rows } = await sql<StoredContribution>`
      SELECT project_id AS "projectId", encode(trace_id, 'hex') AS "traceId", encode(span_id, 'hex') AS "spanId",
             kind, part, start_ns::text AS "startNs", server, tool, server_version AS "serverVersion", category,
             evidence, agent_name AS "agentName", agent_id AS "agentId", run_id AS "runId", measures
        FROM contribution WHERE ${inTraces(traces)}`.execute(db);
    return rows;
  }

  /** Takes these stored contributions out of every rollup, hourly and daily, and deletes them. */
  async removeContributions(db: Kysely<DB>, keys: readonly ContributionKey[]): Promise<void> {
    for (let at = 0; at < keys.length; at += ROWS_PER_STATEMENT) {
      const chunk = keys.slice(at, at + ROWS_PER_STATEMENT);
      for (const shape of ROLLUPS) await this.applyTo(db, shape, chunk, -1);
      await sql`DELETE FROM contribution c WHERE ${withKeys(chunk)}`.execute(db);
    }
  }

  /** Inserts these contributions (none stored under their keys) and adds them to every rollup, hourly and daily. */
  async addContributions(db: Kysely<DB>, rows: readonly ContributionRow[]): Promise<void> {
    for (let at = 0; at < rows.length; at += ROWS_PER_STATEMENT) {
      const chunk = rows.slice(at, at + ROWS_PER_STATEMENT);
      await this.insert(db, chunk);
      for (const shape of ROLLUPS) await this.applyTo(db, shape, chunk, 1);
    }
  }

  private async insert(db: Kysely<DB>, rows: readonly ContributionRow[]): Promise<void> {
    const batch = JSON.stringify(
      rows.map((r) => [
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

  /** Empties the contributions and rollups, for a rebuild inside the caller's transaction. */
  async truncate(db: Kysely<DB>): Promise<void> {
    await sql`TRUNCATE contribution, call_rollup, finding_rollup, report_rollup`.execute(db);
  }

  /** Adds (1) or takes away (-1) the stored contributions of these keys of `shape`'s kind to or from its rollup. */
  private async applyTo(db: Kysely<DB>, shape: RollupShape, keys: readonly ContributionKey[], sign: 1 | -1) {
    const ofKind = keys.filter((key) => key.kind === shape.kind);
    if (ofKind.length === 0) return;
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
               WHERE ${withKeys(ofKind)}) AS s
       GROUP BY GROUPING SETS ((${list([...key, ...dimensions].map((d) => `s.${d}`))}),
                               (${list([...key, ...withoutAgent].map((d) => `s.${d}`))}))
      ON CONFLICT ON CONSTRAINT ${sql.raw(`${shape.table}_key`)} DO UPDATE SET ${updates}`.execute(db);
  }
}

/** SQL: the `contribution c` row has one of these keys. */
function withKeys(keys: readonly ContributionKey[]): RawBuilder<boolean> {
  return sql<boolean>`(c.project_id, c.trace_id, c.span_id, c.kind, c.part) IN (
    SELECT k.project_id, decode(k.trace_id, 'hex'), decode(k.span_id, 'hex'), k.kind, k.part
      FROM unnest(${keys.map((k) => k.projectId)}::int[], ${keys.map((k) => k.traceId)}::text[],
                  ${keys.map((k) => k.spanId)}::text[], ${keys.map((k) => k.kind)}::text[],
                  ${keys.map((k) => k.part)}::text[]) AS k (project_id, trace_id, span_id, kind, part))`;
}

/** Rollup rows come per agent and summed over all agents: reports without an agent filter read the latter. */
const AGENT_DIMENSIONS = ['agent_name', 'agent_id'];
