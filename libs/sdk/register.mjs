// ESM entry of `@errata/sdk/register`: registers the OpenTelemetry ESM loader hook (import-in-the-middle) of the
// instrumentation package this SDK uses, so that `import '@modelcontextprotocol/sdk/client/index.js'` (or 2.x's
// `import '@modelcontextprotocol/client'`) is patched, then starts Errata (dist/register.js). The hook intercepts the
// MCP SDK's files only: wrapping every module an application imports added seconds to the start of one importing a
// few large SDKs. With OTEL_SDK_DISABLED=true no hook is registered: startErrata does nothing then.
import { createRequire, register } from 'node:module';

const require = createRequire(import.meta.url);
/** Files of @modelcontextprotocol/sdk (1.x) and @modelcontextprotocol/client (2.x), by URL (a pnpm store path has
 * the same segment). */
const MCP_SDK_FILES = /\/@modelcontextprotocol\/(?:sdk|client)\//;
if (process.env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true') {
  register(require.resolve('@opentelemetry/instrumentation/hook.mjs'), import.meta.url, {
    data: { include: [MCP_SDK_FILES] },
  });
}
require('./dist/register.js');
