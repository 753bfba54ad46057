import { describe, expect, it } from 'vitest';
import { DemoError } from '../demo-error';
import { readDemoConfig } from './demo-config';

describe('readDemoConfig', () => {
  it('finds Errata by PORT and HOST, read as Errata reads them, when ERRATA_URL is not set', () => {
    const url = (env: NodeJS.ProcessEnv) => readDemoConfig(env).errataUrl;
    expect(url({})).toBe('http://127.0.0.1:4318');
    // `PORT=5000 npm start`, then the demo: that Errata, not a second one on 4318.
    expect(url({ PORT: '5000' })).toBe('http://127.0.0.1:5000');
    expect(url({ PORT: '5000', HOST: '0.0.0.0' })).toBe('http://127.0.0.1:5000');
    expect(url({ HOST: '::' })).toBe('http://[::1]:4318');
    expect(url({ PORT: '5000', HOST: '::1' })).toBe('http://[::1]:5000');
    expect(url({ PORT: '5000', HOST: 'localhost' })).toBe('http://localhost:5000');
    expect(url({ PORT: '5000', HOST: '10.0.0.7' })).toBe('http://10.0.0.7:5000');
    // ERRATA_URL says it all.
    expect(url({ ERRATA_URL: 'http://127.0.0.1:4400', PORT: '5000' })).toBe('http://127.0.0.1:4400');
    expect(() => url({ PORT: 'http' })).toThrow('PORT must be an integer between 0 and 65535, got "http"');
    expect(() => url({ PORT: '0' })).toThrow(DemoError);
    expect(() => url({ HOST: 'a host' })).toThrow('HOST must be a host name or an IP address; got "a host"');
  });
});
