// ESM entry of `@errata/sdk/register`: registers the OpenTelemetry ESM loader hook (import-in-the-middle) of the
// instrumentation package this SDK uses, so that `import '@modelcontextprotocol/sdk/client/index.js'` is patched,
// then starts Errata (dist/register.js).
import { createRequire, register } from 'node:module';

const require = createRequire(import.meta.url);
register(require.resolve('@opentelemetry/instrumentation/hook.mjs'), import.meta.url);
require('./dist/register.js');
