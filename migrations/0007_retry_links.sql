-- A hinted retry (errata.retry.of) may name a call of another trace, e.g. when a chat runtime makes each user turn
-- a trace. The projector re-derives such linked traces together (DOMAIN.md §2: the hint always wins) and finds them
-- through these two indexes: the call a hint names, and the calls that name a call.
CREATE INDEX tool_call_span_id_idx ON tool_call (project_id, span_id);
CREATE INDEX tool_call_retry_of_idx ON tool_call (project_id, retry_of) WHERE retry_of IS NOT NULL;
