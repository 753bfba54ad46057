import type { OtlpEncoding } from './types';

/** Picks the decoder from a Content-Type header; null means 415 Unsupported Media Type. */
export function encodingForContentType(contentType: string | undefined): OtlpEncoding | null {
  if (contentType === undefined) return null;
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  if (mediaType === 'application/x-protobuf') return 'protobuf';
  if (mediaType === 'application/json') return 'json';
  return null;
}
