import { filterQuery, withQuery } from '../route';
import { Link } from './link';

interface Sample {
  readonly traceId: string;
  readonly runId?: string;
  readonly spanId: string;
}

/**
 * A sample's run timeline, carrying the window and filters of the page it was opened from, and that page (`back`), for
 * the timeline's way back when it is opened from a shared link.
 */
export const traceHref = (sample: Sample, query: URLSearchParams, back: string = location.pathname): string =>
  `/traces/${sample.traceId}${withQuery(new URLSearchParams(filterQuery(query)), { run: sample.runId ?? null, span: sample.spanId, back })}`;

/** The link a sample (a misclassified call, a wasted retry, a finding's offence) opens its run timeline with. */
export function TimelineLink({ sample, query }: { sample: Sample; query: URLSearchParams }) {
  return (
    <Link href={traceHref(sample, query)} class="sample-link" data-sample={sample.spanId}>
      Open run timeline
    </Link>
  );
}
