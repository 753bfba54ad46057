-- Per-trace projections and rollups (DOMAIN.md §2–§4, §7, §8): reports over a window sum hourly and daily
-- rollups, plus the contributions of the partial hours at the window's edges; none scans the event log.
--
-- Span edges join the projection's input: a late parent span changes which agent run the calls under it belong
-- to, so the projector reads new edges in log order too (their own checkpoint) and re-derives their traces.
ALTER TABLE span_edge ADD COLUMN transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id();
ALTER TABLE span_edge ADD COLUMN global_position bigint GENERATED ALWAYS AS IDENTITY;
CREATE INDEX span_edge_transaction_id_global_position_idx ON span_edge (transaction_id, global_position);

-- What each call, retry, unrecovered chain, escalation, finding and subagent report of a trace adds to the
-- reports (libs/domain report-contributions.ts). A trace the projector re-derives has only the rows that changed
-- replaced (apps/server projections/contribution-changes.ts); the others stay, and stay in the rollups, as they are.
-- kind: 'call' (part = call | retry | chain | escalation), 'finding' (part = the rule), 'report' (part = report).
-- measures: the non-zero measures, {"calls": 1, "failures": 1, ...}.
CREATE TABLE contribution (
  project_id integer NOT NULL,
  trace_id bytea NOT NULL,
  span_id bytea NOT NULL,
  kind text NOT NULL,
  part text NOT NULL,
  start_time timestamptz NOT NULL,
  start_ns bigint NOT NULL,
  server text,
  tool text,
  server_version text,
  category text,
  evidence text,
  agent_name text,
  agent_id text,
  -- Findings only: the run a sample belongs to.
  run_id text,
  measures jsonb NOT NULL,
  CONSTRAINT contribution_pkey PRIMARY KEY (project_id, trace_id, span_id, kind, part)
);
CREATE INDEX contribution_project_id_start_time_idx ON contribution (project_id, start_time);
-- A finding's earliest and latest offences (samples, first and last seen) in a window. A null server is
-- indexed as '' and told apart by the query.
CREATE INDEX contribution_offence_idx ON contribution (project_id, (coalesce(server, '')), tool, part, start_ns, span_id)
  WHERE kind = 'finding';

-- Rollup rows are updated in place by every batch that changes a contribution in their bucket (its old row out, its
-- new one in). Half-full
-- pages keep those updates HOT: the row stays on its page and no index entry is added, so a bucket's rows stay
-- together and the tables do not bloat between vacuums.

-- Contributions of kind 'call', summed per hour (bucket_hours 1) and per UTC day (24), over all agents and per agent.
CREATE TABLE call_rollup (
  project_id integer NOT NULL,
  bucket_hours smallint NOT NULL CHECK (bucket_hours IN (1, 24)),
  bucket timestamptz NOT NULL,
  -- false: summed over every agent (agent columns null), for reports without an agent filter; true: per agent.
  by_agent boolean NOT NULL,
  server text,
  tool text,
  server_version text,
  agent_name text,
  agent_id text,
  category text,
  calls bigint NOT NULL DEFAULT 0,
  failures bigint NOT NULL DEFAULT 0,
  violating_calls bigint NOT NULL DEFAULT 0,
  empty_as_error bigint NOT NULL DEFAULT 0,
  failure_as_empty bigint NOT NULL DEFAULT 0,
  misclassified_retries bigint NOT NULL DEFAULT 0,
  misclassified_escalations bigint NOT NULL DEFAULT 0,
  subagent_transient bigint NOT NULL DEFAULT 0,
  absorbed_transient bigint NOT NULL DEFAULT 0,
  retries bigint NOT NULL DEFAULT 0,
  wasted_retries bigint NOT NULL DEFAULT 0,
  wasted_ns bigint NOT NULL DEFAULT 0,
  wasted_tokens bigint NOT NULL DEFAULT 0,
  non_retryable bigint NOT NULL DEFAULT 0,
  blind_retry bigint NOT NULL DEFAULT 0,
  corrected bigint NOT NULL DEFAULT 0,
  recovery bigint NOT NULL DEFAULT 0,
  ignored_retry_after bigint NOT NULL DEFAULT 0,
  guess bigint NOT NULL DEFAULT 0,
  misclassified_empty bigint NOT NULL DEFAULT 0,
  repeated_empty bigint NOT NULL DEFAULT 0,
  refined bigint NOT NULL DEFAULT 0,
  unrecovered_chains bigint NOT NULL DEFAULT 0,
  escalations bigint NOT NULL DEFAULT 0,
  attributed bigint NOT NULL DEFAULT 0,
  avoidable bigint NOT NULL DEFAULT 0,
  to_human bigint NOT NULL DEFAULT 0,
  to_user bigint NOT NULL DEFAULT 0,
  to_coordinator bigint NOT NULL DEFAULT 0,
  CONSTRAINT call_rollup_key UNIQUE NULLS NOT DISTINCT (project_id, bucket_hours, bucket, by_agent, server, tool, server_version, agent_name, agent_id, category)
) WITH (fillfactor = 50);

-- Contributions of kind 'finding', summed per hour and per UTC day, over all agents and per agent.
CREATE TABLE finding_rollup (
  project_id integer NOT NULL,
  bucket_hours smallint NOT NULL CHECK (bucket_hours IN (1, 24)),
  bucket timestamptz NOT NULL,
  -- false: summed over every agent (agent columns null), for reports without an agent filter; true: per agent.
  by_agent boolean NOT NULL,
  server text,
  tool text,
  rule text,
  evidence text,
  server_version text,
  agent_name text,
  agent_id text,
  offences bigint NOT NULL DEFAULT 0,
  call_offences bigint NOT NULL DEFAULT 0,
  retries_caused bigint NOT NULL DEFAULT 0,
  wasted_retries bigint NOT NULL DEFAULT 0,
  wasted_ns bigint NOT NULL DEFAULT 0,
  escalations_caused bigint NOT NULL DEFAULT 0,
  CONSTRAINT finding_rollup_key UNIQUE NULLS NOT DISTINCT (project_id, bucket_hours, bucket, by_agent, server, tool, rule, evidence, server_version, agent_name, agent_id)
) WITH (fillfactor = 50);

-- Contributions of kind 'report', summed per hour and per UTC day, over all agents and per agent.
CREATE TABLE report_rollup (
  project_id integer NOT NULL,
  bucket_hours smallint NOT NULL CHECK (bucket_hours IN (1, 24)),
  bucket timestamptz NOT NULL,
  -- false: summed over every agent (agent columns null), for reports without an agent filter; true: per agent.
  by_agent boolean NOT NULL,
  agent_name text,
  agent_id text,
  reports bigint NOT NULL DEFAULT 0,
  complete bigint NOT NULL DEFAULT 0,
  partial bigint NOT NULL DEFAULT 0,
  failed bigint NOT NULL DEFAULT 0,
  coverage_reports bigint NOT NULL DEFAULT 0,
  coverage_nanos bigint NOT NULL DEFAULT 0,
  coverage_0_25 bigint NOT NULL DEFAULT 0,
  coverage_25_50 bigint NOT NULL DEFAULT 0,
  coverage_50_75 bigint NOT NULL DEFAULT 0,
  coverage_75_100 bigint NOT NULL DEFAULT 0,
  coverage_100 bigint NOT NULL DEFAULT 0,
  failure_reports bigint NOT NULL DEFAULT 0,
  fully_propagated bigint NOT NULL DEFAULT 0,
  missing_category bigint NOT NULL DEFAULT 0,
  missing_attempted bigint NOT NULL DEFAULT 0,
  missing_partial_results bigint NOT NULL DEFAULT 0,
  missing_alternatives bigint NOT NULL DEFAULT 0,
  silent_partials bigint NOT NULL DEFAULT 0,
  CONSTRAINT report_rollup_key UNIQUE NULLS NOT DISTINCT (project_id, bucket_hours, bucket, by_agent, agent_name, agent_id)
) WITH (fillfactor = 50);
