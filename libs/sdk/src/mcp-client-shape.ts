/**
 * Where each line of the MCP TypeScript SDK's client keeps what a tools/call span reads: `@modelcontextprotocol/sdk`
 * 1.x and `@modelcontextprotocol/client` 2.x (which `@openai/agents` 0.15 and later use). One tracer records both;
 * a client's line is told once, when its module is patched or the client instrumented, never on a call.
 */
import { isRecord } from '@errata/domain';

export interface McpClientShape {
  /**
   * `options` (signal, task, resumptionToken) of `callTool(params, resultSchema?, options?)` (1.x) or
   * `callTool(params, options?)` (2.x).
   */
  callToolOptions(args: readonly unknown[]): unknown;
  /** `options` of `request(request, resultSchema?, options?)` (1.x) or, in 2.x, also `request(request, options?)`. */
  requestOptions(args: readonly unknown[]): unknown;
  /**
   * The negotiated protocol version: 1.x has no getter for it (`remembered` is what its `initialize` answered, else
   * the HTTP transport's); 2.x's `getNegotiatedProtocolVersion()` also knows the one a `server/discover` chose.
   */
  protocolVersion(client: object, transport: unknown, remembered: string | undefined): unknown;
}

export const MCP_SDK_V1: McpClientShape = {
  callToolOptions: (args) => args[2],
  requestOptions: (args) => args[2],
  protocolVersion: (_client, transport, remembered) =>
    remembered ?? (isRecord(transport) ? transport['protocolVersion'] : undefined),
};

/** A Standard Schema (2.x takes one, optionally, as `request`'s second argument): it has a `~standard` key. */
const isStandardSchema = (value: unknown): boolean => isRecord(value) && '~standard' in value;

export const MCP_CLIENT_V2: McpClientShape = {
  callToolOptions: (args) => args[1],
  requestOptions: (args) => (isStandardSchema(args[1]) ? args[2] : args[1]),
  protocolVersion: (client) => {
    const getter = (client as { getNegotiatedProtocolVersion?: unknown }).getNegotiatedProtocolVersion;
    return typeof getter === 'function' ? (getter as () => unknown).call(client) : undefined;
  },
};

/** A 2.x client has `getProtocolEra()` (the 2026 protocol's era), which no 1.x release has. */
export const clientShapeOf = (client: object): McpClientShape =>
  typeof (client as { getProtocolEra?: unknown }).getProtocolEra === 'function' ? MCP_CLIENT_V2 : MCP_SDK_V1;
