-- The event log, projects and keys, projection checkpoints and the first read models.
-- Ordering of the log: (transaction_id, global_position), read only below pg_snapshot_xmin (eventstore.md §1).
-- Idempotency key: (project_id, trace_id, span_id, start_time). start_time is the span's own start, identical
-- on every retry of an export, so the table can later be partitioned by RANGE (start_time) without the key
-- losing its meaning (eventstore.md §2).

CREATE TABLE project (
  id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT project_name_uq UNIQUE (name)
);

CREATE TABLE api_key (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id integer NOT NULL REFERENCES project (id) ON DELETE CASCADE,
  scope text NOT NULL CHECK (scope IN ('ingest', 'read', 'admin')),
  key_hash bytea NOT NULL,
  key_prefix text NOT NULL,
  -- 'env' keys mirror ERRATA_*_KEY and are replaced when those change; 'cli' and 'bootstrap' keys stay.
  managed_by text NOT NULL CHECK (managed_by IN ('env', 'bootstrap', 'cli')),
  label text,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  CONSTRAINT api_key_key_hash_uq UNIQUE (key_hash)
);

CREATE TABLE event (
  project_id integer NOT NULL,
  trace_id bytea NOT NULL,
  span_id bytea NOT NULL,
  start_time timestamptz NOT NULL,
  global_position bigint GENERATED ALWAYS AS IDENTITY,
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  type text NOT NULL,
  parent_span_id bytea,
  end_time timestamptz NOT NULL,
  server_name text,
  tool_name text,
  outcome text,
  data jsonb NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT event_pkey PRIMARY KEY (project_id, trace_id, span_id, start_time)
);
CREATE INDEX event_transaction_id_global_position_idx ON event (transaction_id, global_position);

-- Spans that are not events leave only their place in the trace, so a tool call nested under other
-- spans still resolves to the nearest invoke_agent ancestor (DOMAIN.md §5). Nothing else of them is kept.
CREATE TABLE span_edge (
  project_id integer NOT NULL,
  trace_id bytea NOT NULL,
  span_id bytea NOT NULL,
  start_time timestamptz NOT NULL,
  parent_span_id bytea NOT NULL,
  CONSTRAINT span_edge_pkey PRIMARY KEY (project_id, trace_id, span_id, start_time)
);

-- One row per accepted OTLP request: what came in and what became of it.
CREATE TABLE ingest_batch (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id integer NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  spans_received integer NOT NULL,
  events_appended integer NOT NULL,
  spans_dropped integer NOT NULL,
  spans_rejected integer NOT NULL
);

CREATE TABLE projection_checkpoint (
  name text PRIMARY KEY,
  version integer NOT NULL,
  transaction_id xid8 NOT NULL DEFAULT '0',
  global_position bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tool_call (
  project_id integer NOT NULL,
  trace_id bytea NOT NULL,
  span_id bytea NOT NULL,
  start_time timestamptz NOT NULL,
  parent_span_id bytea,
  start_ns bigint NOT NULL,
  end_ns bigint NOT NULL,
  server_name text,
  server_version text,
  tool text NOT NULL,
  outcome text NOT NULL,
  category text,
  category_source text,
  declared_category text,
  -- 'true', 'false' or 'after_change' (validation failures: retry only with changed arguments)
  retryable text,
  empty_as_error boolean NOT NULL,
  failure_as_empty boolean NOT NULL,
  args_hash text,
  retry_of bytea,
  retry_attempt integer,
  retry_after_ms integer,
  tokens integer,
  rules_version integer NOT NULL,
  CONSTRAINT tool_call_pkey PRIMARY KEY (project_id, trace_id, span_id, start_time)
);
CREATE INDEX tool_call_project_id_start_time_idx ON tool_call (project_id, start_time);

CREATE TABLE agent_run (
  project_id integer NOT NULL,
  trace_id bytea NOT NULL,
  span_id bytea NOT NULL,
  start_time timestamptz NOT NULL,
  parent_span_id bytea,
  agent_name text,
  agent_id text,
  conversation_id text,
  role text,
  CONSTRAINT agent_run_pkey PRIMARY KEY (project_id, trace_id, span_id, start_time)
);
