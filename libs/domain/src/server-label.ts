/**
 * The server of calls whose server did not say its name (no `serverInfo` in the handshake, no `mcp.server.name`): the
 * retry-waste group they are counted under, and the `server` filter value that selects them, so that a group can be
 * opened. A server that calls itself "(unknown)" is counted and selected with them.
 */
export const UNKNOWN_SERVER = '(unknown)';
