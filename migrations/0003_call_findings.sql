-- The error-contract findings of each call (DOMAIN.md §7), as detected under the rules version of the row:
-- a JSON array of {"rule", "evidence"}. Rules version 3 rebuilds every read model, which fills it.
ALTER TABLE tool_call ADD COLUMN findings jsonb NOT NULL DEFAULT '[]'::jsonb;
