import { Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../database/schema';

export interface ToolCallRow {
  readonly projectId: number;
  readonly traceId: string;
  readonly spanId: string;
  readonly startTime: string;
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
}

export interface AgentRunRow {
  readonly projectId: number;
  readonly traceId: string;
  readonly spanId: string;
  readonly startTime: string;
  readonly parentSpanId: string | null;
  readonly agentName: string | null;
  readonly agentId: string | null;
  readonly conversationId: string | null;
  readonly role: string | null;
}

/**
 * Writes of the read models the projector maintains. Upserts, so re-applying an event (after a lost
 * compare-and-set, or a rebuild) leaves the same row.
 */
@Injectable()
export class ReadModelRepository {
  async upsertToolCalls(db: Kysely<DB>, rows: readonly ToolCallRow[]): Promise<void> {
    if (rows.length === 0) return;
    const c = <K extends keyof ToolCallRow>(key: K) => rows.map((row) => row[key]);
    await sql`
      INSERT INTO tool_call (project_id, trace_id, span_id, start_time, parent_span_id, start_ns, end_ns, server_name,
                             server_version, tool, outcome, category, category_source, declared_category, retryable,
                             empty_as_error, failure_as_empty, args_hash, retry_of, retry_attempt, retry_after_ms,
                             tokens, rules_version)
      SELECT u.project_id, decode(u.trace_id, 'hex'), decode(u.span_id, 'hex'), u.start_time,
             decode(u.parent_span_id, 'hex'), u.start_ns, u.end_ns, u.server_name, u.server_version, u.tool, u.outcome,
             u.category, u.category_source, u.declared_category, u.retryable, u.empty_as_error, u.failure_as_empty,
             u.args_hash, decode(u.retry_of, 'hex'), u.retry_attempt, u.retry_after_ms, u.tokens, u.rules_version
        FROM unnest(${c('projectId')}::int[], ${c('traceId')}::text[], ${c('spanId')}::text[],
                    ${c('startTime')}::timestamptz[], ${c('parentSpanId')}::text[], ${c('startNs')}::bigint[],
                    ${c('endNs')}::bigint[], ${c('serverName')}::text[], ${c('serverVersion')}::text[],
                    ${c('tool')}::text[], ${c('outcome')}::text[], ${c('category')}::text[],
                    ${c('categorySource')}::text[], ${c('declaredCategory')}::text[], ${c('retryable')}::text[],
                    ${c('emptyAsError')}::boolean[], ${c('failureAsEmpty')}::boolean[], ${c('argsHash')}::text[],
                    ${c('retryOf')}::text[], ${c('retryAttempt')}::int[], ${c('retryAfterMs')}::int[],
                    ${c('tokens')}::int[], ${c('rulesVersion')}::int[])
             AS u(project_id, trace_id, span_id, start_time, parent_span_id, start_ns, end_ns, server_name,
                  server_version, tool, outcome, category, category_source, declared_category, retryable,
                  empty_as_error, failure_as_empty, args_hash, retry_of, retry_attempt, retry_after_ms, tokens,
                  rules_version)
      ON CONFLICT ON CONSTRAINT tool_call_pkey DO UPDATE SET
        parent_span_id = excluded.parent_span_id, start_ns = excluded.start_ns, end_ns = excluded.end_ns,
        server_name = excluded.server_name, server_version = excluded.server_version, tool = excluded.tool,
        outcome = excluded.outcome, category = excluded.category, category_source = excluded.category_source,
        declared_category = excluded.declared_category, retryable = excluded.retryable,
        empty_as_error = excluded.empty_as_error, failure_as_empty = excluded.failure_as_empty,
        args_hash = excluded.args_hash, retry_of = excluded.retry_of, retry_attempt = excluded.retry_attempt,
        retry_after_ms = excluded.retry_after_ms, tokens = excluded.tokens, rules_version = excluded.rules_version`.execute(
      db,
    );
  }

  async upsertAgentRuns(db: Kysely<DB>, rows: readonly AgentRunRow[]): Promise<void> {
    if (rows.length === 0) return;
    const c = <K extends keyof AgentRunRow>(key: K) => rows.map((row) => row[key]);
    await sql`
      INSERT INTO agent_run (project_id, trace_id, span_id, start_time, parent_span_id, agent_name, agent_id,
                             conversation_id, role)
      SELECT u.project_id, decode(u.trace_id, 'hex'), decode(u.span_id, 'hex'), u.start_time,
             decode(u.parent_span_id, 'hex'), u.agent_name, u.agent_id, u.conversation_id, u.role
        FROM unnest(${c('projectId')}::int[], ${c('traceId')}::text[], ${c('spanId')}::text[],
                    ${c('startTime')}::timestamptz[], ${c('parentSpanId')}::text[], ${c('agentName')}::text[],
                    ${c('agentId')}::text[], ${c('conversationId')}::text[], ${c('role')}::text[])
             AS u(project_id, trace_id, span_id, start_time, parent_span_id, agent_name, agent_id, conversation_id,
                  role)
      ON CONFLICT ON CONSTRAINT agent_run_pkey DO UPDATE SET
        parent_span_id = excluded.parent_span_id, agent_name = excluded.agent_name, agent_id = excluded.agent_id,
        conversation_id = excluded.conversation_id, role = excluded.role`.execute(db);
  }

  /** Empties every read model, for a rebuild inside the caller's transaction. */
  async truncate(db: Kysely<DB>): Promise<void> {
    await sql`TRUNCATE tool_call, agent_run`.execute(db);
  }
}
