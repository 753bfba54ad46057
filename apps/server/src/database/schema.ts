import type { CallMeasure, FindingMeasure, ReportMeasure } from '@errata/domain';
import type { ColumnType, Generated } from 'kysely';

/**
 * Table types for Kysely, one interface per table of `migrations/`. Repositories select explicit columns
 * and cast ids, positions and times to text in SQL, so `pg` and PGlite return the same JavaScript types.
 */
type Bytea = ColumnType<Uint8Array, Uint8Array, never>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Xid8 = ColumnType<string, string | undefined, string>;
type Int8 = ColumnType<string, string | bigint | number, string | bigint | number>;
type Json = ColumnType<unknown, string, string>;

export interface ProjectTable {
  id: Generated<number>;
  name: string;
  created_at: Generated<Timestamp>;
  /** 0014: keep tool calls' raw arguments, redacted and cut (DOMAIN.md §6). */
  store_arguments: Generated<boolean>;
}

export type KeyScope = 'ingest' | 'read' | 'admin';
export type KeyManagedBy = 'env' | 'bootstrap' | 'cli';

export interface ApiKeyTable {
  id: Generated<string>;
  project_id: number;
  scope: KeyScope;
  key_hash: ColumnType<Uint8Array, Uint8Array, never>;
  key_prefix: string;
  managed_by: KeyManagedBy;
  label: string | null;
  created_at: Generated<Timestamp>;
  revoked_at: Timestamp | null;
}

export interface EventTable {
  project_id: number;
  trace_id: Bytea;
  span_id: Bytea;
  start_time: Timestamp;
  global_position: Generated<Int8>;
  transaction_id: Xid8;
  type: string;
  parent_span_id: Bytea | null;
  end_time: Timestamp;
  server_name: string | null;
  tool_name: string | null;
  outcome: string | null;
  data: ColumnType<unknown, string, never>;
  received_at: Generated<Timestamp>;
}

export interface SpanEdgeTable {
  project_id: number;
  trace_id: Bytea;
  span_id: Bytea;
  start_time: Timestamp;
  parent_span_id: Bytea;
  transaction_id: Xid8;
  global_position: Generated<Int8>;
}

export interface IngestBatchTable {
  id: Generated<Int8>;
  project_id: number;
  received_at: Generated<Timestamp>;
  spans_received: number;
  events_appended: number;
  spans_dropped: number;
  spans_rejected: number;
}

export interface ProjectionCheckpointTable {
  name: string;
  version: number;
  transaction_id: Xid8;
  global_position: Int8;
  updated_at: Generated<Timestamp>;
  /** The last record's global_position when a rebuild began (0013): the rebuild is done once every one up to it is. */
  rebuild_until: Int8 | null;
  /** The settings the read models were derived with (0017); null until recorded. */
  derivation: Json | null;
}

export interface ProjectionSkipTable {
  id: Generated<Int8>;
  projection: string;
  transaction_id: Xid8;
  global_position: Int8;
  project_id: number;
  error: string;
  skipped_at: Generated<Timestamp>;
}

export interface ToolCallTable {
  project_id: number;
  trace_id: Bytea;
  span_id: Bytea;
  start_time: Timestamp;
  parent_span_id: Bytea | null;
  start_ns: Int8;
  end_ns: Int8;
  server_name: string | null;
  server_version: string | null;
  tool: string;
  outcome: string;
  category: string | null;
  category_source: string | null;
  declared_category: string | null;
  retryable: string | null;
  empty_as_error: boolean;
  failure_as_empty: boolean;
  args_hash: string | null;
  retry_of: Bytea | null;
  retry_attempt: number | null;
  retry_after_ms: number | null;
  tokens: number | null;
  rules_version: number;
  customer_explanation: Generated<boolean>;
  evidence: string | null;
  sample_text: string | null;
  findings: ColumnType<unknown, string | undefined, string>;
  /** 0015: recorded by the MCP server's own instrumentation (Sentry's). */
  server_side: Generated<boolean>;
  /** 0018: `declared` or `implied`, where `retryable` is not null. */
  retryable_source: string | null;
}

export interface EscalationTable {
  project_id: number;
  trace_id: Bytea;
  span_id: Bytea;
  start_time: Timestamp;
  parent_span_id: Bytea | null;
  start_ns: Int8;
  target: string;
  reason: string | null;
}

export interface SubagentReportTable {
  project_id: number;
  trace_id: Bytea;
  span_id: Bytea;
  start_time: Timestamp;
  parent_span_id: Bytea | null;
  status: string;
  completed: number | null;
  total: number | null;
  category: string | null;
  attempted: Json | null;
  alternatives: Json | null;
  partial_results: string | null;
  retryable: boolean | null;
}

export interface AgentRunTable {
  project_id: number;
  trace_id: Bytea;
  span_id: Bytea;
  start_time: Timestamp;
  parent_span_id: Bytea | null;
  agent_name: string | null;
  agent_id: string | null;
  conversation_id: string | null;
  role: string | null;
}

export interface ContributionTable {
  project_id: number;
  trace_id: Bytea;
  span_id: Bytea;
  kind: 'call' | 'finding' | 'report';
  part: string;
  start_time: Timestamp;
  start_ns: Int8;
  server: string | null;
  tool: string | null;
  server_version: string | null;
  category: string | null;
  evidence: string | null;
  agent_name: string | null;
  agent_id: string | null;
  run_id: string | null;
  measures: Json;
}

interface RollupKey {
  project_id: number;
  bucket_hours: number;
  bucket: Timestamp;
  by_agent: boolean;
}

export type CallRollupTable = RollupKey &
  Record<'server' | 'tool' | 'server_version' | 'agent_name' | 'agent_id' | 'category', string | null> &
  Record<CallMeasure, Int8>;
export type FindingRollupTable = RollupKey &
  Record<
    'server' | 'tool' | 'rule' | 'evidence' | 'server_version' | 'agent_name' | 'agent_id',
    string | null
  > &
  Record<FindingMeasure, Int8>;
export type ReportRollupTable = RollupKey &
  Record<'agent_name' | 'agent_id', string | null> &
  Record<ReportMeasure, Int8>;

export interface ServerOwnerTable {
  id: Generated<string>;
  project_id: number;
  server_name: string;
  version_range: string | null;
  webhook_url: string;
  contact: string | null;
  secrets: ColumnType<string[], string[], string[] | unknown>;
  disabled_at: ColumnType<Date | null, never, Date | string | null | unknown>;
  disabled_reason: string | null;
  created_at: Generated<Timestamp>;
}

export interface FixEventTable {
  global_position: Generated<Int8>;
  project_id: number;
  finding_id: string;
  type: string;
  data: Json;
  recorded_at: Generated<Timestamp>;
}

export interface FixTable {
  project_id: number;
  finding_id: string;
  state: string;
  body: Json;
  updated_at: Generated<Timestamp>;
}

export interface WebhookDeliveryTable {
  id: Generated<string>;
  project_id: number;
  owner_id: string;
  finding_id: string | null;
  msg_id: string;
  dedupe_key: string;
  event_type: string;
  payload: string;
  status: Generated<'pending' | 'delivered' | 'dead' | 'disabled'>;
  attempts: Generated<number>;
  next_attempt_at: Generated<Timestamp>;
  lease_until: Timestamp | null;
  last_status: number | null;
  last_error: string | null;
  created_at: Generated<Timestamp>;
  delivered_at: Timestamp | null;
}

export interface DB {
  project: ProjectTable;
  api_key: ApiKeyTable;
  event: EventTable;
  span_edge: SpanEdgeTable;
  ingest_batch: IngestBatchTable;
  projection_checkpoint: ProjectionCheckpointTable;
  projection_skip: ProjectionSkipTable;
  tool_call: ToolCallTable;
  agent_run: AgentRunTable;
  escalation: EscalationTable;
  subagent_report: SubagentReportTable;
  contribution: ContributionTable;
  call_rollup: CallRollupTable;
  finding_rollup: FindingRollupTable;
  report_rollup: ReportRollupTable;
  server_owner: ServerOwnerTable;
  fix_event: FixEventTable;
  fix: FixTable;
  webhook_delivery: WebhookDeliveryTable;
}
