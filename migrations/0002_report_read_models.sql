-- Read models for the escalation, misclassification and subagent-coverage reports (DOMAIN.md §3, §4, §8).
-- Rules version 2 rebuilds every read model from the log, which fills the new tool_call columns.

ALTER TABLE tool_call ADD COLUMN customer_explanation boolean NOT NULL DEFAULT false;
-- What decided the classification, and the stored (redacted, truncated) text a misclassified sample shows.
ALTER TABLE tool_call ADD COLUMN evidence text;
ALTER TABLE tool_call ADD COLUMN sample_text text;

CREATE TABLE escalation (
  project_id integer NOT NULL,
  trace_id bytea NOT NULL,
  span_id bytea NOT NULL,
  start_time timestamptz NOT NULL,
  parent_span_id bytea,
  start_ns bigint NOT NULL,
  target text NOT NULL,
  reason text,
  CONSTRAINT escalation_pkey PRIMARY KEY (project_id, trace_id, span_id, start_time)
);
CREATE INDEX escalation_project_id_start_time_idx ON escalation (project_id, start_time);

CREATE TABLE subagent_report (
  project_id integer NOT NULL,
  trace_id bytea NOT NULL,
  span_id bytea NOT NULL,
  start_time timestamptz NOT NULL,
  parent_span_id bytea,
  status text NOT NULL,
  completed integer,
  total integer,
  category text,
  -- JSON arrays of strings, null when the report did not carry the element.
  attempted jsonb,
  alternatives jsonb,
  partial_results text,
  retryable boolean,
  CONSTRAINT subagent_report_pkey PRIMARY KEY (project_id, trace_id, span_id, start_time)
);
CREATE INDEX subagent_report_project_id_start_time_idx ON subagent_report (project_id, start_time);
