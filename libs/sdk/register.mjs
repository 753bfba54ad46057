// ESM entry of `@errata/sdk/register`: registers the OpenTelemetry ESM loader hook (import-in-the-middle) of the
// instrumentation package this SDK uses, so that `import '@modelcontextprotocol/sdk/client/index.js'` is patched,
// then starts Errata (dist/register.js). With OTEL_SDK_DISABLED=true no hook is registered: startErrata does
// nothing then, and the hook would only slow every import down.
import { createRequire, register } from 'node:module';

const require = createRequire(import.meta.url);
if (process.env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true') {
  register(require.resolve('@opentelemetry/instrumentation/hook.mjs'), import.meta.url);
}
require('./dist/register.js');
