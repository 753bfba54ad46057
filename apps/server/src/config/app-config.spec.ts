import { describe, expect, it } from 'vitest';
import { ConfigError, describeDatabaseUrl, loadConfig, MAX_API_KEY_LENGTH } from './app-config';

describe('loadConfig', () => {
  it("takes DATABASE_URL as a URL or as pg's socket form, and refuses what pg would read as a host name", () => {
    for (const url of [
      'postgres://errata:secret@db:5432/errata',
      'postgresql://localhost/errata?sslmode=require',
      'socket:/var/run/postgresql?db=errata',
      '/var/run/postgresql errata',
    ])
      expect(loadConfig({ DATABASE_URL: url }).databaseUrl, url).toBe(url);
    for (const url of ['notaurl', 'mysql://db/errata', 'db:5432'])
      expect(() => loadConfig({ DATABASE_URL: url }), url).toThrow(ConfigError);
  });

  it('describes a database URL without its password, and the socket form as it is', () => {
    expect(describeDatabaseUrl('postgres://errata:secret@db:5432/errata')).toBe(
      'postgres://errata:***@db:5432/errata',
    );
    expect(describeDatabaseUrl('/var/run/postgresql errata')).toBe('/var/run/postgresql errata');
    expect(
      describeDatabaseUrl(
        'postgres://errata@db/errata?password=S3cretInQuery&sslmode=require&sslpassword=k3y',
      ),
    ).toBe('postgres://errata@db/errata?password=***&sslmode=require&sslpassword=***');
  });

  it('refuses an env key longer than any key is looked up for (it would start, and refuse every request)', () => {
    expect(loadConfig({ ERRATA_INGEST_KEY: 'k'.repeat(MAX_API_KEY_LENGTH) }).ingestKey).toHaveLength(
      MAX_API_KEY_LENGTH,
    );
    expect(() => loadConfig({ ERRATA_READ_KEY: 'k'.repeat(MAX_API_KEY_LENGTH + 1) })).toThrow(
      `ERRATA_READ_KEY must be at most ${MAX_API_KEY_LENGTH} characters long, got ${MAX_API_KEY_LENGTH + 1}`,
    );
  });

  it('takes ERRATA_LOG_FORMAT text (the default) or json, and nothing else', () => {
    expect(loadConfig({}).logFormat).toBe('text');
    expect(loadConfig({ ERRATA_LOG_FORMAT: 'JSON' }).logFormat).toBe('json');
    expect(() => loadConfig({ ERRATA_LOG_FORMAT: 'yaml' })).toThrow('ERRATA_LOG_FORMAT must be text or json');
  });

  it("refuses a duration that becomes a timer past a Node timer's longest delay, which would fire at once", () => {
    const timers = [
      'ERRATA_BODY_TIMEOUT_MS',
      'ERRATA_PROJECTION_POLL_MS',
      'ERRATA_WEBHOOK_TIMEOUT_MS',
      'ERRATA_WEBHOOK_RETRY_BASE_MS',
      'ERRATA_DELIVERY_POLL_MS',
      'ERRATA_FIX_INTERVAL_MS',
      'ERRATA_PG_QUERY_TIMEOUT_MS',
    ];
    for (const name of timers) {
      expect(() => loadConfig({ [name]: '2147483647' }), name).not.toThrow();
      expect(() => loadConfig({ [name]: '2592000000' }), name).toThrow(`${name} must be an integer between`);
    }
  });

  it('bounds how long a statement waits for PostgreSQL by ERRATA_PG_QUERY_TIMEOUT_MS: 30 s, 0 for no bound', () => {
    expect(loadConfig({}).queryTimeoutMs).toBe(30_000);
    expect(loadConfig({ ERRATA_PG_QUERY_TIMEOUT_MS: '0' }).queryTimeoutMs).toBe(0);
    expect(() => loadConfig({ ERRATA_PG_QUERY_TIMEOUT_MS: '-1' })).toThrow(
      'ERRATA_PG_QUERY_TIMEOUT_MS must be an integer between 0',
    );
    expect(() => loadConfig({ ERRATA_PG_QUERY_TIMEOUT_MS: '5s' })).toThrow(
      'ERRATA_PG_QUERY_TIMEOUT_MS must be',
    );
    // Shorter than a second, PostgreSQL would cancel startup's own statements, with an error naming no setting.
    expect(() => loadConfig({ ERRATA_PG_QUERY_TIMEOUT_MS: '1' })).toThrow(
      'ERRATA_PG_QUERY_TIMEOUT_MS must be 0 (no bound) or at least 1000 ms, got "1"',
    );
    expect(loadConfig({ ERRATA_PG_QUERY_TIMEOUT_MS: '1000' }).queryTimeoutMs).toBe(1_000);
  });

  it('keeps ERRATA_MAX_CONCURRENT_READS below the pool size, half of it by default, so reads never take every connection', () => {
    expect(loadConfig({}).maxConcurrentReads).toBe(5);
    expect(loadConfig({ ERRATA_PG_POOL_SIZE: '2' }).maxConcurrentReads).toBe(1);
    expect(
      loadConfig({ ERRATA_PG_POOL_SIZE: '30', ERRATA_MAX_CONCURRENT_READS: '29' }).maxConcurrentReads,
    ).toBe(29);
    expect(() => loadConfig({ ERRATA_MAX_CONCURRENT_READS: '10' })).toThrow(
      'ERRATA_MAX_CONCURRENT_READS must be an integer between 1 and 9',
    );
    expect(() => loadConfig({ ERRATA_MAX_CONCURRENT_READS: '0' })).toThrow(ConfigError);
  });
});
