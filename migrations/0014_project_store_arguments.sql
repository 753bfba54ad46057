-- Whether a project keeps its tool calls' raw arguments (redacted and cut like any text) beside their hash and size
-- (DOMAIN.md §6: "never stored raw unless a project opts in"). Off for every project until an admin turns it on.
ALTER TABLE project ADD COLUMN IF NOT EXISTS store_arguments boolean NOT NULL DEFAULT false;
