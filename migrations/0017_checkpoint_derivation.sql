-- The settings the read models were derived with (ERRATA_RETRY_WINDOW_MS, ERRATA_MAX_LINKED_TRACES), as
-- {"retryWindowMs": …, "maxLinkedTraces": …}: a server started with others rebuilds them, as for a new rules version,
-- and the CLI derives with these rather than its own environment's. Null until a projector records them.
ALTER TABLE projection_checkpoint ADD COLUMN IF NOT EXISTS derivation jsonb;
