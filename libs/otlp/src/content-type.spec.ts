import { describe, expect, it } from 'vitest';
import { encodingForContentType } from './index';

describe('encodingForContentType', () => {
  it('maps the two OTLP/HTTP media types', () => {
    expect(encodingForContentType('application/x-protobuf')).toBe('protobuf');
    expect(encodingForContentType('application/json')).toBe('json');
  });

  it('ignores parameters, case and surrounding spaces', () => {
    expect(encodingForContentType('application/json; charset=utf-8')).toBe('json');
    expect(encodingForContentType(' Application/X-Protobuf ;foo=bar')).toBe('protobuf');
  });

  it('returns null for anything else', () => {
    expect(encodingForContentType(undefined)).toBeNull();
    expect(encodingForContentType('')).toBeNull();
    expect(encodingForContentType('text/plain')).toBeNull();
    expect(encodingForContentType('application/protobuf')).toBeNull();
    expect(encodingForContentType('application/jsonx')).toBeNull();
  });
});
