-- Wasted nanoseconds add up retries' own durations, each below 2^63 ns but without a bound on their sum: two retries
-- of a span that claimed to last since 1970 overflowed bigint, and every projection batch failed on that hour's
-- rollup row. numeric does not overflow; sums are read as text either way.
ALTER TABLE call_rollup ALTER COLUMN wasted_ns TYPE numeric;
