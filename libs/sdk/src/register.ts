/**
 * Zero-code setup: `node --require @errata/sdk/register app.js` (CommonJS) or
 * `node --import @errata/sdk/register app.mjs` (ESM, which also registers the OpenTelemetry loader hook). Errata
 * starts before the application loads the MCP SDK, configured by the environment: the standard
 * `OTEL_EXPORTER_OTLP_*` and `OTEL_SERVICE_NAME` variables, plus `ERRATA_API_KEY`, `ERRATA_CAPTURE_RESULTS` and
 * `ERRATA_CAPTURE_ARGUMENTS` (`true` to opt in). Queued spans are flushed when the event loop empties.
 */
import { startErrata, type ErrataHandle } from './start-errata';

const optIn = (name: string): boolean => process.env[name]?.trim().toLowerCase() === 'true';

const handle: ErrataHandle = startErrata({
  apiKey: process.env['ERRATA_API_KEY'] || undefined,
  captureResults: optIn('ERRATA_CAPTURE_RESULTS'),
  captureArguments: optIn('ERRATA_CAPTURE_ARGUMENTS'),
});

export default handle;
