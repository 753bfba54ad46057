import type { RejectedSpan } from './types';

/** Well under the 4 MiB response budget, and short enough to read in an exporter's log line. */
const MAX_MESSAGE_CHARS = 1024;

/**
 * The English `error_message` of a partial success: how many spans were rejected and why, cut
 * short (saying how many were left out) once it would pass about 1 KiB.
 */
export function partialSuccessMessage(rejected: readonly RejectedSpan[]): string {
  if (rejected.length === 0) return '';
  const head = `${rejected.length} ${rejected.length === 1 ? 'span' : 'spans'} rejected: `;
  const parts: string[] = [];
  let length = head.length;
  for (let i = 0; i < rejected.length; i++) {
    const part = describe(rejected[i] as RejectedSpan);
    const omittedAfter = rejected.length - i - 1;
    // Leave room for the "and N more" tail whenever more items follow this one.
    const tail = omittedAfter > 0 ? `; and ${omittedAfter} more`.length : 0;
    if (parts.length > 0 && length + 2 + part.length + tail > MAX_MESSAGE_CHARS) {
      return `${head}${parts.join('; ')}; and ${rejected.length - i} more`;
    }
    parts.push(part);
    length += (parts.length > 1 ? 2 : 0) + part.length;
  }
  return head + parts.join('; ');
}

function describe(span: RejectedSpan): string {
  const who = span.spanId !== null ? `span ${span.spanId}` : 'span without a valid span_id';
  const text = `${who}: ${span.reason}`;
  // One oversized reason must not crowd out the rest.
  return text.length > MAX_MESSAGE_CHARS / 2 ? `${text.slice(0, MAX_MESSAGE_CHARS / 2)}…` : text;
}
