-- Whether a failed call's retryability (`retryable`) was declared by the server or implied by its category: a
-- failure declared not retryable whose retry with the same arguments succeeded violates retryable-mismatch. Filled
-- by the rebuild that rules version 11 brings.
ALTER TABLE tool_call ADD COLUMN IF NOT EXISTS retryable_source text;
