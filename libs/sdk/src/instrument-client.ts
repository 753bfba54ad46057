/**
 * Instruments one MCP `Client` instance, for bundled code where module patching cannot see the SDK being
 * loaded. The client gets its own `callTool` / `request` properties wrapping the class's methods; a client
 * whose class is already patched by `McpClientInstrumentation` is left as it is. Without a `config` of its own,
 * the client follows the capture settings of the running `startErrata` (read at each call).
 */
import { diag } from '@opentelemetry/api';
import { runningCaptureConfig } from './capture-config';
import { errataTracer } from './tracer';
import { isErrataWrapper, ToolCallTracer } from './tool-call-tracer';
import type { ToolCallCaptureConfig } from './types';

type Method = (this: object, ...args: unknown[]) => unknown;

export function instrumentMcpClient<C extends object>(client: C, config?: ToolCallCaptureConfig): C {
  try {
    const target = client as unknown as Record<string, unknown>;
    const callTool = target['callTool'];
    const request = target['request'];
    if (typeof callTool !== 'function' || typeof request !== 'function') {
      diag.warn(
        '@errata/sdk: instrumentMcpClient expects an @modelcontextprotocol/sdk Client; left as it is',
      );
      return client;
    }
    if (isErrataWrapper(callTool)) return client;
    const toolCalls = new ToolCallTracer(
      errataTracer,
      config === undefined ? runningCaptureConfig : () => config,
    );
    Object.defineProperty(client, 'callTool', {
      value: toolCalls.wrapCallTool(callTool as Method),
      configurable: true,
      writable: true,
    });
    if (!isErrataWrapper(request)) {
      Object.defineProperty(client, 'request', {
        value: toolCalls.wrapRequest(request as Method),
        configurable: true,
        writable: true,
      });
    }
  } catch (error) {
    diag.error('@errata/sdk: could not instrument the MCP client', error);
  }
  return client;
}
