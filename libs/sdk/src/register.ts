/**
 * Zero-code setup: `node --require @errata/sdk/register app.js` (CommonJS) or
 * `node --import @errata/sdk/register app.mjs` (ESM, which also registers the OpenTelemetry loader hook). Errata
 * starts before the application loads the MCP SDK, configured by the environment: the standard
 * `OTEL_EXPORTER_OTLP_*` and `OTEL_SERVICE_NAME` variables, plus `ERRATA_API_KEY`, `ERRATA_CAPTURE_RESULTS` and
 * `ERRATA_CAPTURE_ARGUMENTS` (`true` to opt in), and `OTEL_LOG_LEVEL` for its `diag` messages. Queued spans are
 * flushed when the event loop empties.
 */
import { diag, DiagConsoleLogger } from '@opentelemetry/api';
import { diagLogLevelFromString } from '@opentelemetry/core';
import { startErrata, type ErrataHandle } from './start-errata';

// OTEL_LOG_LEVEL, as OpenTelemetry's own zero-code setups honour it: without a logger, a wrong key or an
// unreachable endpoint would fail in silence. Errata's messages go to the console at that level.
// An empty value is unset, as OpenTelemetry reads it (diagLogLevelFromString('') would be INFO).
const logLevel = diagLogLevelFromString(process.env['OTEL_LOG_LEVEL']?.trim() || undefined);
if (logLevel !== undefined)
  diag.setLogger(new DiagConsoleLogger(), { logLevel, suppressOverrideMessage: true });

// startErrata reads ERRATA_API_KEY and ERRATA_CAPTURE_* itself.
const handle: ErrataHandle = startErrata();

export default handle;
