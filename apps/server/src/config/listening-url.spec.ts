import { describe, expect, it } from 'vitest';
import { listeningUrl } from './listening-url';

describe('listeningUrl', () => {
  it('brackets an IPv6 host, as a URL must; an IPv4 address or a name is written as it is', () => {
    expect(listeningUrl('::1', 42208)).toBe('http://[::1]:42208');
    expect(listeningUrl('::', 4318)).toBe('http://[::]:4318');
    expect(listeningUrl('127.0.0.1', 4318)).toBe('http://127.0.0.1:4318');
    expect(listeningUrl('0.0.0.0', 4318)).toBe('http://0.0.0.0:4318');
    expect(listeningUrl('localhost', 4318)).toBe('http://localhost:4318');
    expect(new URL(listeningUrl('::1', 42208)).port).toBe('42208');
  });
});
