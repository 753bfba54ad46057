/**
 * Instruments one MCP `Client` instance (`@modelcontextprotocol/sdk` 1.x or `@modelcontextprotocol/client` 2.x), for
 * bundled code where module patching cannot see the SDK being loaded. The client gets its own `callTool` / `request`
 * properties wrapping the class's methods; a client whose class, or a class it extends, is already patched by
 * `McpClientInstrumentation` is left as it is. Without a `config` of its own, the client follows the capture settings
 * of the running `startErrata` (read at each call); a `config` holds for the client whichever wrapper records its
 * calls, the patched class's included.
 */
import { diag } from '@opentelemetry/api';
import { checkedCaptureConfig, runningCaptureConfig, setClientCaptureConfig } from './capture-config';
import { errataTracer } from './tracer';
import { isErrataWrapper, ToolCallTracer } from './tool-call-tracer';
import { clientShapeOf } from './mcp-client-shape';
import type { ToolCallCaptureConfig } from './types';
import { safeDiag } from './safe-diag';

type Method = (this: object, ...args: unknown[]) => unknown;

/**
 * Whether the method is an Errata wrapper on the client or on a class it extends: a host subclass that overrides
 * `callTool` and calls `super.callTool` on a patched Client is instrumented already.
 */
function wrappedAlongChain(client: object, method: string): boolean {
  for (let owner: object | null = client; owner !== null; owner = Object.getPrototypeOf(owner)) {
    if (isErrataWrapper(Object.getOwnPropertyDescriptor(owner, method)?.value)) return true;
  }
  return false;
}

export function instrumentMcpClient<C extends object>(client: C, config?: ToolCallCaptureConfig): C {
  try {
    const target = client as unknown as Record<string, unknown>;
    const callTool = target['callTool'];
    const request = target['request'];
    if (typeof callTool !== 'function' || typeof request !== 'function') {
      safeDiag(() => diag.warn('@errata/sdk: instrumentMcpClient expects an MCP SDK Client; left as it is'));
      return client;
    }
    if (config !== undefined) setClientCaptureConfig(client, checkedCaptureConfig(config));
    if (wrappedAlongChain(client, 'callTool')) return client;
    const toolCalls = new ToolCallTracer(errataTracer, runningCaptureConfig, clientShapeOf(client));
    Object.defineProperty(client, 'callTool', {
      value: toolCalls.wrapCallTool(callTool as Method),
      configurable: true,
      writable: true,
    });
    if (!wrappedAlongChain(client, 'request')) {
      Object.defineProperty(client, 'request', {
        value: toolCalls.wrapRequest(request as Method),
        configurable: true,
        writable: true,
      });
    }
    // Where the client receives its server's requests (Protocol's, private in SDK 1.x and 2.x): absent, skipped.
    const onRequest = target['_onrequest'];
    if (typeof onRequest === 'function' && !wrappedAlongChain(client, '_onrequest')) {
      Object.defineProperty(client, '_onrequest', {
        value: toolCalls.wrapOnRequest(onRequest as Method),
        configurable: true,
        writable: true,
      });
    }
  } catch (error) {
    safeDiag(() => diag.error('@errata/sdk: could not instrument the MCP client', error));
  }
  return client;
}
