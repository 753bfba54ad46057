/**
 * Attribute names this package writes. The MCP and GenAI conventions are still "Development" in OpenTelemetry
 * (research/otel_mcp_spec.md §1), so they are copied here rather than imported from the incubating entry point;
 * `errata.*` are Errata's own (DOMAIN.md §5).
 * @experimental
 */
export const ATTR_MCP_METHOD_NAME = 'mcp.method.name';
export const ATTR_MCP_SESSION_ID = 'mcp.session.id';
export const ATTR_MCP_PROTOCOL_VERSION = 'mcp.protocol.version';
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const ATTR_GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
export const ATTR_GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments';
export const ATTR_GEN_AI_TOOL_CALL_RESULT = 'gen_ai.tool.call.result';
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
export const ATTR_GEN_AI_AGENT_NAME = 'gen_ai.agent.name';
export const ATTR_GEN_AI_AGENT_ID = 'gen_ai.agent.id';
export const ATTR_GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id';
export const ATTR_JSONRPC_REQUEST_ID = 'jsonrpc.request.id';
export const ATTR_RPC_RESPONSE_STATUS_CODE = 'rpc.response.status_code';
export const ATTR_ERROR_TYPE = 'error.type';
/** `error.type` of a result with `isError: true` (DOMAIN.md §5). */
export const ERROR_TYPE_TOOL_ERROR = 'tool_error';
export const ATTR_NETWORK_TRANSPORT = 'network.transport';
export const ATTR_NETWORK_PROTOCOL_NAME = 'network.protocol.name';
export const ATTR_SERVER_ADDRESS = 'server.address';
export const ATTR_SERVER_PORT = 'server.port';
export const ATTR_HTTP_RESPONSE_STATUS_CODE = 'http.response.status_code';

export const ATTR_ERRATA_SERVER_NAME = 'errata.server.name';
export const ATTR_ERRATA_SERVER_VERSION = 'errata.server.version';
export const ATTR_ERRATA_RESULT_IS_ERROR = 'errata.result.is_error';
export const ATTR_ERRATA_RESULT_EMPTY = 'errata.result.empty';
export const ATTR_ERRATA_RESULT_ITEM_COUNT = 'errata.result.item_count';
export const ATTR_ERRATA_RESULT_TEXT = 'errata.result.text';
export const ATTR_ERRATA_RESULT_STRUCTURED = 'errata.result.structured';
export const ATTR_ERRATA_RESULT_TEXT_MIRROR = 'errata.result.text_mirror';
export const ATTR_ERRATA_ERROR_CATEGORY = 'errata.error.category';
export const ATTR_ERRATA_ERROR_RETRYABLE = 'errata.error.retryable';
export const ATTR_ERRATA_ERROR_CODE = 'errata.error.code';
export const ATTR_ERRATA_ERROR_RETRY_AFTER_MS = 'errata.error.retry_after_ms';
export const ATTR_ERRATA_ARGS_HASH = 'errata.args.hash';
export const ATTR_ERRATA_ARGS_SIZE = 'errata.args.size';
export const ATTR_ERRATA_RETRY_OF = 'errata.retry.of';
export const ATTR_ERRATA_RETRY_ATTEMPT = 'errata.retry.attempt';
export const ATTR_ERRATA_AGENT_ROLE = 'errata.agent.role';
export const ATTR_ERRATA_ESCALATION_TARGET = 'errata.escalation.target';
export const ATTR_ERRATA_ESCALATION_REASON = 'errata.escalation.reason';
export const ATTR_ERRATA_SUBAGENT_STATUS = 'errata.subagent.status';
export const ATTR_ERRATA_SUBAGENT_COMPLETED = 'errata.subagent.completed';
export const ATTR_ERRATA_SUBAGENT_TOTAL = 'errata.subagent.total';
export const ATTR_ERRATA_SUBAGENT_ATTEMPTED = 'errata.subagent.attempted';
export const ATTR_ERRATA_SUBAGENT_ALTERNATIVES = 'errata.subagent.alternatives';
export const ATTR_ERRATA_SUBAGENT_PARTIAL_RESULTS = 'errata.subagent.partial_results';

export const MCP_METHOD_TOOLS_CALL = 'tools/call';
export const GEN_AI_OPERATION_EXECUTE_TOOL = 'execute_tool';
export const GEN_AI_OPERATION_INVOKE_AGENT = 'invoke_agent';
