-- No query reads tool_call by time: the reports read the rollups and contributions, the run timeline reads a trace's
-- calls by their key. The index cost a write per projected call and 44 MB at 1 M calls (0 scans over the reports
-- benchmark; BENCHMARKS.md "Storage").
DROP INDEX IF EXISTS tool_call_project_id_start_time_idx;
