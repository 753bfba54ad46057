-- The rollups split by bucket size and by agent grouping (LIST partitions on bucket_hours, then by_agent).
--
-- Rows are updated in place and inserted in projection order, so in one table a day's daily rows over all agents lay
-- scattered among that day's hourly and per-agent rows: a 30-day findings report read 12,743 rows from 5,019 heap
-- pages (BENCHMARKS.md, runs E and F). In their own partition the rows a report reads sit together. Queries, keys and
-- writes are unchanged: the partition keys are part of every rollup's unique key, and ON CONFLICT routes through it.

ALTER TABLE call_rollup RENAME TO call_rollup_unpartitioned;
ALTER TABLE call_rollup_unpartitioned RENAME CONSTRAINT call_rollup_key TO call_rollup_unpartitioned_key;
CREATE TABLE call_rollup (LIKE call_rollup_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY LIST (bucket_hours);
CREATE TABLE call_rollup_hourly PARTITION OF call_rollup FOR VALUES IN (1) PARTITION BY LIST (by_agent);
CREATE TABLE call_rollup_hourly_all PARTITION OF call_rollup_hourly FOR VALUES IN (false) WITH (fillfactor = 50);
CREATE TABLE call_rollup_hourly_by_agent PARTITION OF call_rollup_hourly FOR VALUES IN (true) WITH (fillfactor = 50);
CREATE TABLE call_rollup_daily PARTITION OF call_rollup FOR VALUES IN (24) PARTITION BY LIST (by_agent);
CREATE TABLE call_rollup_daily_all PARTITION OF call_rollup_daily FOR VALUES IN (false) WITH (fillfactor = 50);
CREATE TABLE call_rollup_daily_by_agent PARTITION OF call_rollup_daily FOR VALUES IN (true) WITH (fillfactor = 50);
ALTER TABLE call_rollup ADD CONSTRAINT call_rollup_key UNIQUE NULLS NOT DISTINCT (project_id, bucket_hours, bucket, by_agent, server, tool, server_version, agent_name, agent_id, category);
INSERT INTO call_rollup SELECT * FROM call_rollup_unpartitioned;
DROP TABLE call_rollup_unpartitioned;

ALTER TABLE finding_rollup RENAME TO finding_rollup_unpartitioned;
ALTER TABLE finding_rollup_unpartitioned RENAME CONSTRAINT finding_rollup_key TO finding_rollup_unpartitioned_key;
CREATE TABLE finding_rollup (LIKE finding_rollup_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY LIST (bucket_hours);
CREATE TABLE finding_rollup_hourly PARTITION OF finding_rollup FOR VALUES IN (1) PARTITION BY LIST (by_agent);
CREATE TABLE finding_rollup_hourly_all PARTITION OF finding_rollup_hourly FOR VALUES IN (false) WITH (fillfactor = 50);
CREATE TABLE finding_rollup_hourly_by_agent PARTITION OF finding_rollup_hourly FOR VALUES IN (true) WITH (fillfactor = 50);
CREATE TABLE finding_rollup_daily PARTITION OF finding_rollup FOR VALUES IN (24) PARTITION BY LIST (by_agent);
CREATE TABLE finding_rollup_daily_all PARTITION OF finding_rollup_daily FOR VALUES IN (false) WITH (fillfactor = 50);
CREATE TABLE finding_rollup_daily_by_agent PARTITION OF finding_rollup_daily FOR VALUES IN (true) WITH (fillfactor = 50);
ALTER TABLE finding_rollup ADD CONSTRAINT finding_rollup_key UNIQUE NULLS NOT DISTINCT (project_id, bucket_hours, bucket, by_agent, server, tool, rule, evidence, server_version, agent_name, agent_id);
INSERT INTO finding_rollup SELECT * FROM finding_rollup_unpartitioned;
DROP TABLE finding_rollup_unpartitioned;

ALTER TABLE report_rollup RENAME TO report_rollup_unpartitioned;
ALTER TABLE report_rollup_unpartitioned RENAME CONSTRAINT report_rollup_key TO report_rollup_unpartitioned_key;
CREATE TABLE report_rollup (LIKE report_rollup_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY LIST (bucket_hours);
CREATE TABLE report_rollup_hourly PARTITION OF report_rollup FOR VALUES IN (1) PARTITION BY LIST (by_agent);
CREATE TABLE report_rollup_hourly_all PARTITION OF report_rollup_hourly FOR VALUES IN (false) WITH (fillfactor = 50);
CREATE TABLE report_rollup_hourly_by_agent PARTITION OF report_rollup_hourly FOR VALUES IN (true) WITH (fillfactor = 50);
CREATE TABLE report_rollup_daily PARTITION OF report_rollup FOR VALUES IN (24) PARTITION BY LIST (by_agent);
CREATE TABLE report_rollup_daily_all PARTITION OF report_rollup_daily FOR VALUES IN (false) WITH (fillfactor = 50);
CREATE TABLE report_rollup_daily_by_agent PARTITION OF report_rollup_daily FOR VALUES IN (true) WITH (fillfactor = 50);
ALTER TABLE report_rollup ADD CONSTRAINT report_rollup_key UNIQUE NULLS NOT DISTINCT (project_id, bucket_hours, bucket, by_agent, agent_name, agent_id);
INSERT INTO report_rollup SELECT * FROM report_rollup_unpartitioned;
DROP TABLE report_rollup_unpartitioned;
