/** The key check every request makes: what it keeps of the keys it saw, and what it does not look up at all. */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { ProjectRepository } from '../apps/server/src/repositories/project.repository';
import { MAX_API_KEY_LENGTH } from '../apps/server/src/config/app-config';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { startTestServer, type TestServer } from './support/server';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('postgres');
});
afterAll(() => server?.close());

it('keeps what it looked up by hash and bounded, so a flood of distinct bogus keys cannot grow it', async () => {
  const keys = server.app.get(ApiKeyService);
  const cache = (keys as unknown as { cache: Map<string, unknown> }).cache;
  // Given a flood of distinct bogus keys of a kilobyte each
  for (let i = 0; i < 10_500; i++)
    expect(await keys.verify(`${i}-`.padEnd(MAX_API_KEY_LENGTH, 'x'))).toBeNull();
  // Then the cache holds at most 10,000 entries, each under a hash (44 base64 characters), never the key
  expect(cache.size).toBeLessThanOrEqual(10_000);
  expect([...cache.keys()].every((key) => key.length === 44)).toBe(true);
  // And a real key still verifies
  expect(await keys.verify(server.readKey)).toMatchObject({ scope: 'read' });
});

it('refuses a key longer than any key can be without looking it up', async () => {
  const lookups = vi.spyOn(server.app.get(ProjectRepository), 'findLiveKeyByHash');
  try {
    expect(await server.app.get(ApiKeyService).verify('k'.repeat(MAX_API_KEY_LENGTH + 1))).toBeNull();
    expect(lookups).not.toHaveBeenCalled();
    const answer = await fetch(`${server.url}/api/v1/servers`, {
      headers: { authorization: `Bearer ${'k'.repeat(15_000)}` },
    });
    expect(answer.status).toBe(401);
    expect(lookups).not.toHaveBeenCalled();
  } finally {
    lookups.mockRestore();
  }
});
