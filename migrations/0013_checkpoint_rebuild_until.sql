-- How far a rebuild must go before the read models are whole again: the global_position of the last record of the
-- projection's table (event, span_edge) when the rebuild began. Fix rounds wait until the projection has passed
-- every record up to it: read models half rebuilt verified fixes that the rest of the log contradicted.
ALTER TABLE projection_checkpoint ADD COLUMN IF NOT EXISTS rebuild_until bigint;
