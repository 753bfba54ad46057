-- Whether a tool call was recorded by the MCP server's own instrumentation (Sentry's), not by the client: under the
-- client's span of the same call it is that call seen from the other end, and the derivation drops it. Filled by the
-- rebuild that rules version 10 brings.
ALTER TABLE tool_call ADD COLUMN IF NOT EXISTS server_side boolean NOT NULL DEFAULT false;
