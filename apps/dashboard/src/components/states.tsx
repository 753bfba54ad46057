import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { ApiError } from '../api';
import { keepFocus } from '../focus';
import { MAX_SERIES_DAYS } from '../series';
import { retryFailedRequests, type Loaded } from '../use-api';
import { useScrollsSideways } from './scroll-box';

/** Said by a screen reader (a polite live region; not `aria-busy`, which would hold the announcement back). */
function Loading({ what }: { what: string }) {
  return (
    <div class="state state-loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      Loading {what}…
    </div>
  );
}

function ErrorState({
  error,
  retry,
  notFoundHint,
}: {
  error: ApiError;
  retry: () => void;
  notFoundHint: string;
}) {
  const hint =
    error.status === 0
      ? 'Check that Errata is running and reachable from this browser.'
      : error.status === 400
        ? 'The filters in the address bar are not valid for this view.'
        : error.status === 404
          ? notFoundHint
          : null;
  return (
    <div class="state state-error" role="alert">
      <h2>{error.status === 404 ? 'Not found' : 'This view could not be loaded'}</h2>
      <p class="error-message">{error.message}</p>
      {hint && <p>{hint}</p>}
      <button
        type="button"
        onClick={() => {
          keepFocus(); // on the content once it loads, back on this button if it fails again
          retry();
          retryFailedRequests(); // what failed beside the view (the filter bar's lists) comes back with it
        }}
      >
        Try again
      </button>
    </div>
  );
}

/** Renders `children` with the data once loaded, and the loading and error states before that. */
export function Await<T>({
  loaded,
  what,
  retry,
  notFoundHint = 'It may belong to another project, or lie outside the selected time range.',
  children,
}: {
  loaded: Loaded<T>;
  what: string;
  retry: () => void;
  /** What a 404 may mean for this view. */
  notFoundHint?: string;
  children: (data: T) => ComponentChildren;
}) {
  if (loaded.state === 'loading') return <Loading what={what} />;
  if (loaded.state === 'error')
    return <ErrorState error={loaded.error} retry={retry} notFoundHint={notFoundHint} />;
  return <>{children(loaded.data)}</>;
}

export function CopyBlock({ label, text }: { label: string; text: string }) {
  const [copied, setCopied] = useState(false);
  const [pre, scrolls] = useScrollsSideways<HTMLPreElement>();
  const copy = () =>
    navigator.clipboard?.writeText(text).then(
      () => {
        setCopied(true);
        setTimeout(() => setCopied(false), 2_000);
      },
      () => setCopied(false),
    );
  return (
    <div class="copy-block">
      <div class="copy-head">
        <span>{label}</span>
        <button type="button" onClick={copy} aria-label={`Copy: ${label}`}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        {/* The button's name stays "Copy: …": a screen reader hears that it worked here. */}
        <span class="visually-hidden" role="status">
          {copied ? `Copied: ${label}` : ''}
        </span>
      </div>
      <pre
        ref={pre}
        tabIndex={scrolls ? 0 : undefined}
        role={scrolls ? 'region' : undefined}
        aria-label={scrolls ? label : undefined}
      >
        <code>{text}</code>
      </pre>
    </div>
  );
}

/** What a project without data in the window sees: how to send some, with snippets to copy. */
export function EmptyState({ what, filtered }: { what: string; filtered: boolean }) {
  const origin = location.origin;
  if (filtered) {
    return (
      <div class="state state-empty" data-empty>
        <h2>No {what} in this window</h2>
        <p>
          Nothing matches the selected time range and filters. Widen the range or clear the server and tool
          filters.
        </p>
      </div>
    );
  }
  return (
    <div class="state state-empty" data-empty>
      <h2>No {what} yet</h2>
      <p>
        Errata fills these views from the tool-call spans your agents send to <code>{origin}/v1/traces</code>.
        Use an
        <strong> ingest</strong> key (not the read key you signed in with) to send them.
      </p>
      <div class="snippets">
        <CopyBlock
          label="TypeScript agent with @errata/sdk"
          text={`// @errata/sdk is not on the npm registry: pack it from Errata's repository and install the
// packs (libs/sdk/README.md, "Install").
import { startErrata } from '@errata/sdk';

startErrata({ endpoint: '${origin}', apiKey: process.env.ERRATA_INGEST_KEY });
// CommonJS: MCP clients required after this line report every tools/call.
// ES modules load their imports first: wrap each client with instrumentMcpClient(client)
// from @errata/sdk, or drop this call and run with node --import @errata/sdk/register
// and ERRATA_ENDPOINT=${origin} ERRATA_API_KEY=<ingest key> in the environment.`}
        />
        <CopyBlock
          label="Any OpenTelemetry exporter (environment)"
          text={`OTEL_EXPORTER_OTLP_ENDPOINT=${origin}
OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20<ingest key>
OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf`}
        />
        <CopyBlock label="Try it with the demo agent" text="npm run demo" />
      </div>
    </div>
  );
}

/** What in the address bar could not be used as written, and what the page shows instead. */
export function UrlNotice({ notices }: { notices: readonly string[] }) {
  if (notices.length === 0) return null;
  return (
    <p class="url-notice" role="status" data-url-notice>
      <strong>This link could not be shown as written.</strong> {notices.join(' ')}
    </p>
  );
}

/** Why a page's charts over time are empty: its window is longer than a series can be (`useSeries`). */
export function SeriesTooLong({ shown }: { shown: boolean }) {
  if (!shown) return null;
  return (
    <p class="url-notice" role="status" data-series-too-long>
      <strong>No charts over time for this window.</strong> They cover at most{' '}
      {MAX_SERIES_DAYS.toLocaleString('en-US')} days; the figures are the whole window's. Choose a shorter
      window to see them over time.
    </p>
  );
}
