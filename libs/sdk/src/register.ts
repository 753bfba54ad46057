/**
 * Zero-code setup: `node --require @errata/sdk/register app.js` (CommonJS) or
 * `node --import @errata/sdk/register app.mjs` (ESM, which also registers the OpenTelemetry loader hook). Errata
 * starts before the application loads the MCP SDK, configured by the environment: the standard
 * `OTEL_EXPORTER_OTLP_*` and `OTEL_SERVICE_NAME` variables, plus `ERRATA_API_KEY`, `ERRATA_CAPTURE_RESULTS` and
 * `ERRATA_CAPTURE_ARGUMENTS` (`true` to opt in). Queued spans are flushed when the event loop empties.
 */
import { startErrata, type ErrataHandle } from './start-errata';

// startErrata reads ERRATA_API_KEY and ERRATA_CAPTURE_* itself.
const handle: ErrataHandle = startErrata();

export default handle;
