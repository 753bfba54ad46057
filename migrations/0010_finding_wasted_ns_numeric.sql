-- The finding rollups sum wasted nanoseconds too (the retries a finding's calls caused): numeric, as 0008 made the
-- call rollups', so that retries claiming to have lasted for centuries cannot overflow an hour's sum.
ALTER TABLE finding_rollup ALTER COLUMN wasted_ns TYPE numeric;
