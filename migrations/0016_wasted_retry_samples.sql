-- A retry-waste group's samples: its latest wasted retries in a window (GET /reports/retry-waste), read newest first
-- per group, by the dimension the report groups by. Only wasted retries are indexed (a retry contribution's measures
-- hold `wasted_retries` only when it was wasted), a small part of the contributions. A null server is indexed as ''
-- and told apart by the query, as in contribution_offence_idx.
CREATE INDEX IF NOT EXISTS contribution_wasted_retry_category_idx
  ON contribution (project_id, category, start_ns, span_id)
  WHERE kind = 'call' AND part = 'retry' AND measures ? 'wasted_retries';
CREATE INDEX IF NOT EXISTS contribution_wasted_retry_server_idx
  ON contribution (project_id, (coalesce(server, '')), start_ns, span_id)
  WHERE kind = 'call' AND part = 'retry' AND measures ? 'wasted_retries';
CREATE INDEX IF NOT EXISTS contribution_wasted_retry_tool_idx
  ON contribution (project_id, (coalesce(server, '')), tool, start_ns, span_id)
  WHERE kind = 'call' AND part = 'retry' AND measures ? 'wasted_retries';
