-- GET /names lists the agents with calls, escalations or subagent reports in a window. Grouping the window's per-agent
-- rollup rows for it read every agent's every server, tool, version and category: 50 ms of a 57 ms request over 30
-- days at 1.35 M events (BENCHMARKS.md, stop 28). With the agents in an index (by name, or id when unnamed, as the
-- agent filter selects them), the read is a loose index scan instead: one probe for the next agent, one per range of
-- the window for a counted row of it. Neither column ever changes in a row, so the rollups' in-place updates stay HOT.
CREATE INDEX IF NOT EXISTS call_rollup_agent_idx
  ON call_rollup (project_id, (coalesce(agent_name, agent_id)), bucket)
  WHERE by_agent AND coalesce(agent_name, agent_id) IS NOT NULL;
CREATE INDEX IF NOT EXISTS report_rollup_agent_idx
  ON report_rollup (project_id, (coalesce(agent_name, agent_id)), bucket)
  WHERE by_agent AND coalesce(agent_name, agent_id) IS NOT NULL;
