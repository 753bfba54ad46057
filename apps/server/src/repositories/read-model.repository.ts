import { Injectable } from '@nestjs/common';
import type { CallFinding } from '@errata/domain';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../database/schema';
import { timestampFromMicros } from '../database/timestamps';
import { PROJECTION_TABLES } from './statistics.repository';

/**
 * The tables a rebuild empties: the read models, then the contributions and rollups (`RollupRepository.truncate`);
 * the span edges are a log.
 */
const REBUILT_TABLES = PROJECTION_TABLES.filter((table) => table !== 'span_edge');
/** How long a rebuild waits for a table while it holds others (below deadlock_timeout's default 1 s). */
const REBUILD_LOCK_WAIT_MS = 200;
/** SQLSTATE of a lock not taken within lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';

/** A `tool_call` row as the projection builds it: ids hex, times as microseconds / nanoseconds since the epoch. */
export interface ToolCallRow {
  readonly projectId: number;
  readonly traceId: string;
  readonly spanId: string;
  readonly startMicros: number;
  readonly parentSpanId: string | null;
  readonly startNs: string;
  readonly endNs: string;
  readonly serverName: string | null;
  readonly serverVersion: string | null;
  readonly tool: string;
  readonly outcome: string;
  readonly category: string | null;
  readonly categorySource: string | null;
  readonly declaredCategory: string | null;
  readonly retryable: string | null;
  readonly emptyAsError: boolean;
  readonly failureAsEmpty: boolean;
  readonly argsHash: string | null;
  readonly retryOf: string | null;
  readonly retryAttempt: number | null;
  readonly retryAfterMs: number | null;
  readonly tokens: number | null;
  readonly rulesVersion: number;
  readonly customerExplanation: boolean;
  readonly evidence: string | null;
  readonly sampleText: string | null;
  readonly findings: readonly CallFinding[];
  readonly serverSide: boolean;
  /** Whether `retryable` was declared by the server or implied by the category; null with it. */
  readonly retryableSource: string | null;
}

export interface EscalationRow {
  readonly projectId: number;
  readonly traceId: string;
  readonly spanId: string;
  readonly startMicros: number;
  readonly parentSpanId: string | null;
  readonly startNs: string;
  readonly target: string;
  readonly reason: string | null;
}

export interface SubagentReportRow {
  readonly projectId: number;
  readonly traceId: string;
  readonly spanId: string;
  readonly startMicros: number;
  readonly parentSpanId: string | null;
  readonly status: string;
  readonly completed: number | null;
  readonly total: number | null;
  readonly category: string | null;
  readonly attempted: readonly string[] | null;
  readonly alternatives: readonly string[] | null;
  readonly partialResults: string | null;
  readonly retryable: boolean | null;
}

export interface AgentRunRow {
  readonly projectId: number;
  readonly traceId: string;
  readonly spanId: string;
  readonly startMicros: number;
  readonly parentSpanId: string | null;
  readonly agentName: string | null;
  readonly agentId: string | null;
  readonly conversationId: string | null;
  readonly role: string | null;
}

/**
 * Writes of the read models the projector maintains. Upserts, so re-applying an event (after a lost
 * compare-and-set, or a rebuild) leaves the same row. Rows travel as one JSON document of positional
 * arrays, like the event log's inserts (EventRepository.appendByInsert says why).
 */
@Injectable()
export class ReadModelRepository {
  async upsertToolCalls(db: Kysely<DB>, rows: readonly ToolCallRow[]): Promise<void> {
    if (rows.length === 0) return;
    const batch = JSON.stringify(
      rows.map((r) => [
        r.projectId,
        r.traceId,
        r.spanId,
        r.startMicros,
        r.parentSpanId,
        r.startNs,
        r.endNs,
        r.serverName,
        r.serverVersion,
        r.tool,
        r.outcome,
        r.category,
        r.categorySource,
        r.declaredCategory,
        r.retryable,
        r.emptyAsError,
        r.failureAsEmpty,
        r.argsHash,
        r.retryOf,
        r.retryAttempt,
        r.retryAfterMs,
        r.tokens,
        r.rulesVersion,
        r.customerExplanation,
        r.evidence,
        r.sampleText,
        r.findings,
        r.serverSide,
        r.retryableSource,
      ]),
    );
    await sql`
      INSERT INTO tool_call (project_id, trace_id, span_id, start_time, parent_span_id, start_ns, end_ns, server_name,
                             server_version, tool, outcome, category, category_source, declared_category, retryable,
                             empty_as_error, failure_as_empty, args_hash, retry_of, retry_attempt, retry_after_ms,
                             tokens, rules_version, customer_explanation, evidence, sample_text, findings,
                             server_side, retryable_source)
      SELECT (r->>0)::int, decode(r->>1, 'hex'), decode(r->>2, 'hex'), ${timestampFromMicros(sql`(r->>3)::bigint`)},
             decode(r->>4, 'hex'), (r->>5)::bigint, (r->>6)::bigint, r->>7, r->>8, r->>9, r->>10, r->>11, r->>12,
             r->>13, r->>14, (r->>15)::boolean, (r->>16)::boolean, r->>17, decode(r->>18, 'hex'), (r->>19)::int,
             (r->>20)::int, (r->>21)::int, (r->>22)::int, (r->>23)::boolean, r->>24, r->>25, r->26,
             (r->>27)::boolean, r->>28
        FROM jsonb_array_elements(${batch}::jsonb) AS r
      ON CONFLICT ON CONSTRAINT tool_call_pkey DO UPDATE SET
        parent_span_id = excluded.parent_span_id, start_ns = excluded.start_ns, end_ns = excluded.end_ns,
        server_name = excluded.server_name, server_version = excluded.server_version, tool = excluded.tool,
        outcome = excluded.outcome, category = excluded.category, category_source = excluded.category_source,
        declared_category = excluded.declared_category, retryable = excluded.retryable,
        empty_as_error = excluded.empty_as_error, failure_as_empty = excluded.failure_as_empty,
        args_hash = excluded.args_hash, retry_of = excluded.retry_of, retry_attempt = excluded.retry_attempt,
        retry_after_ms = excluded.retry_after_ms, tokens = excluded.tokens,
        rules_version = excluded.rules_version, customer_explanation = excluded.customer_explanation,
        evidence = excluded.evidence, sample_text = excluded.sample_text, findings = excluded.findings,
        server_side = excluded.server_side, retryable_source = excluded.retryable_source`.execute(db);
  }

  async upsertAgentRuns(db: Kysely<DB>, rows: readonly AgentRunRow[]): Promise<void> {
    if (rows.length === 0) return;
    const batch = JSON.stringify(
      rows.map((r) => [
        r.projectId,
        r.traceId,
        r.spanId,
        r.startMicros,
        r.parentSpanId,
        r.agentName,
        r.agentId,
        r.conversationId,
        r.role,
      ]),
    );
    await sql`
      INSERT INTO agent_run (project_id, trace_id, span_id, start_time, parent_span_id, agent_name, agent_id,
                             conversation_id, role)
      SELECT (r->>0)::int, decode(r->>1, 'hex'), decode(r->>2, 'hex'), ${timestampFromMicros(sql`(r->>3)::bigint`)},
             decode(r->>4, 'hex'), r->>5, r->>6, r->>7, r->>8
        FROM jsonb_array_elements(${batch}::jsonb) AS r
      ON CONFLICT ON CONSTRAINT agent_run_pkey DO UPDATE SET
        parent_span_id = excluded.parent_span_id, agent_name = excluded.agent_name, agent_id = excluded.agent_id,
        conversation_id = excluded.conversation_id, role = excluded.role`.execute(db);
  }

  async upsertEscalations(db: Kysely<DB>, rows: readonly EscalationRow[]): Promise<void> {
    if (rows.length === 0) return;
    const batch = JSON.stringify(
      rows.map((r) => [
        r.projectId,
        r.traceId,
        r.spanId,
        r.startMicros,
        r.parentSpanId,
        r.startNs,
        r.target,
        r.reason,
      ]),
    );
    await sql`
      INSERT INTO escalation (project_id, trace_id, span_id, start_time, parent_span_id, start_ns, target, reason)
      SELECT (r->>0)::int, decode(r->>1, 'hex'), decode(r->>2, 'hex'), ${timestampFromMicros(sql`(r->>3)::bigint`)},
             decode(r->>4, 'hex'), (r->>5)::bigint, r->>6, r->>7
        FROM jsonb_array_elements(${batch}::jsonb) AS r
      ON CONFLICT ON CONSTRAINT escalation_pkey DO UPDATE SET
        parent_span_id = excluded.parent_span_id, start_ns = excluded.start_ns, target = excluded.target,
        reason = excluded.reason`.execute(db);
  }

  async upsertSubagentReports(db: Kysely<DB>, rows: readonly SubagentReportRow[]): Promise<void> {
    if (rows.length === 0) return;
    const batch = JSON.stringify(
      rows.map((r) => [
        r.projectId,
        r.traceId,
        r.spanId,
        r.startMicros,
        r.parentSpanId,
        r.status,
        r.completed,
        r.total,
        r.category,
        r.attempted,
        r.alternatives,
        r.partialResults,
        r.retryable,
      ]),
    );
    await sql`
      INSERT INTO subagent_report (project_id, trace_id, span_id, start_time, parent_span_id, status, completed, total,
                                   category, attempted, alternatives, partial_results, retryable)
      SELECT (r->>0)::int, decode(r->>1, 'hex'), decode(r->>2, 'hex'), ${timestampFromMicros(sql`(r->>3)::bigint`)},
             decode(r->>4, 'hex'), r->>5, (r->>6)::int, (r->>7)::int, r->>8, nullif(r->9, 'null'::jsonb),
             nullif(r->10, 'null'::jsonb), r->>11, (r->>12)::boolean
        FROM jsonb_array_elements(${batch}::jsonb) AS r
      ON CONFLICT ON CONSTRAINT subagent_report_pkey DO UPDATE SET
        parent_span_id = excluded.parent_span_id, status = excluded.status, completed = excluded.completed,
        total = excluded.total, category = excluded.category, attempted = excluded.attempted,
        alternatives = excluded.alternatives, partial_results = excluded.partial_results,
        retryable = excluded.retryable`.execute(db);
  }

  /**
   * Takes every table a rebuild empties (these read models, and RollupRepository's contributions and rollups) for the
   * caller's transaction, all of them or none. A report's snapshot reads several of them one after another: a TRUNCATE
   * that took some and waited for the report to let go of the next deadlocked with the report's next read, and
   * PostgreSQL ended the one that began waiting first, the rebuild (`projections rebuild`, `events prune --yes` lost
   * its deletion). Now a rebuild that cannot take them all within a moment lets go of those it took and tries again.
   */
  async lockForRebuild(db: Kysely<DB>): Promise<void> {
    const { rows } = await sql<{ wait: string }>`SELECT current_setting('lock_timeout') AS wait`.execute(db);
    for (;;) {
      await sql`SAVEPOINT rebuild_locks`.execute(db);
      try {
        await sql`SELECT set_config('lock_timeout', ${`${REBUILD_LOCK_WAIT_MS}ms`}, true)`.execute(db);
        await sql`LOCK TABLE ${sql.raw(REBUILT_TABLES.join(', '))} IN ACCESS EXCLUSIVE MODE`.execute(db);
        await sql`RELEASE SAVEPOINT rebuild_locks`.execute(db);
        await sql`SELECT set_config('lock_timeout', ${rows[0]!.wait}, true)`.execute(db);
        return;
      } catch (error) {
        if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw error;
        await sql`ROLLBACK TO SAVEPOINT rebuild_locks`.execute(db);
        await new Promise((resolve) => setTimeout(resolve, REBUILD_LOCK_WAIT_MS * (0.5 + Math.random())));
      }
    }
  }

  /** Empties every read model, for a rebuild inside the caller's transaction. */
  async truncate(db: Kysely<DB>): Promise<void> {
    await sql`TRUNCATE tool_call, agent_run, escalation, subagent_report`.execute(db);
  }
}
