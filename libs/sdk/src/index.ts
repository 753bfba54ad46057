export { McpClientInstrumentation } from './mcp-client.instrumentation';
export { instrumentMcpClient } from './instrument-client';
export { withAgentRun, recordEscalation, recordSubagentReport } from './agent';
export { withToolCall, toolCallSpanId } from './tool-call-hints';
export { startErrata, createErrataSpanProcessor } from './start-errata';
export type { ErrataOptions, ErrataExportOptions, ErrataHandle } from './start-errata';
export { ErrataSpanProcessor, isErrataSpan } from './errata-span-processor';
export type { ErrataSpanProcessorOptions, ErrataExportStats } from './errata-span-processor';
export type {
  McpClientInstrumentationConfig,
  ToolCallCaptureConfig,
  ToolCallInfo,
  ToolCallHints,
  AgentRunOptions,
  AgentRun,
  AgentRole,
  Escalation,
  EscalationTarget,
  SubagentReport,
  SubagentStatus,
} from './types';
