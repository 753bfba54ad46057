import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { MAX_API_KEY_LENGTH } from '../config/app-config';
import type { KeyManagedBy, KeyScope } from '../database/schema';
import { ProjectRepository } from '../repositories/project.repository';

export const KEY_SCOPES: readonly KeyScope[] = ['ingest', 'read', 'admin'];

export interface Principal {
  readonly projectId: number;
  readonly projectName: string;
  readonly scope: KeyScope;
  /** The project keeps its calls' raw arguments (`projects settings --store-arguments on`). */
  readonly storeArguments: boolean;
}

/** How long a verified key is trusted without asking the database; revocation takes effect within it. */
const KEY_CACHE_MS = 5_000;
const MAX_CACHED_KEYS = 10_000;

export function hashKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/**
 * What `keys list` shows of a key set through ERRATA_INGEST_KEY / ERRATA_READ_KEY. Such a key is any string the
 * operator chose, so no part of it is safe to show (keys Errata makes show their fixed `errata_<scope>_` start
 * and a few random characters); it is named by the start of its hash instead, which tells no more than the stored
 * hash does and which `printf %s "$KEY" | sha256sum` reproduces.
 */
export function envKeyPrefix(keyHash: Buffer): string {
  return `sha256:${keyHash.toString('hex').slice(0, 8)}`;
}

/** What a key of `scope` may do: admin keys can also read and ingest; ingest and read keys only that. */
export function scopeAllows(scope: KeyScope, needed: KeyScope): boolean {
  return scope === needed || scope === 'admin';
}

/** "a read key", "an ingest key", "an admin key". */
export const aKeyOf = (scope: KeyScope): string => `${/^[aeiou]/.test(scope) ? 'an' : 'a'} ${scope} key`;

@Injectable()
export class ApiKeyService {
  private readonly cache = new Map<string, { principal: Principal | null; until: number }>();

  constructor(private readonly projects: ProjectRepository) {}

  /** A new random key; only its hash is stored, so this is the one time it can be shown. */
  /** A new key; `projects`: the repository of the caller's transaction, when the key must commit with more. */
  async create(
    projectId: number,
    scope: KeyScope,
    managedBy: KeyManagedBy,
    label: string | null = null,
    projects: ProjectRepository = this.projects,
  ) {
    const key = `errata_${scope}_${randomBytes(24).toString('base64url')}`;
    const row = await projects.insertKey({
      projectId,
      scope,
      keyHash: hashKey(key),
      keyPrefix: key.slice(0, scope.length + 12),
      managedBy,
      label,
    });
    return { ...row, key };
  }

  /**
   * The key's principal, or null. Cached by the key's hash (never the key, and a bogus key of kilobytes takes no more
   * room than a real one); a key longer than any key can be is refused without a lookup.
   */
  async verify(key: string): Promise<Principal | null> {
    if (key.length > MAX_API_KEY_LENGTH) return null;
    const now = Date.now();
    const hash = hashKey(key);
    const cacheKey = hash.toString('base64');
    const cached = this.cache.get(cacheKey);
    if (cached && cached.until > now) return cached.principal;
    const row = await this.projects.findLiveKeyByHash(hash);
    const principal = row
      ? {
          projectId: row.projectId,
          projectName: row.projectName,
          scope: row.scope,
          storeArguments: row.storeArguments,
        }
      : null;
    if (this.cache.size >= MAX_CACHED_KEYS) this.forgetExpired(now);
    this.cache.set(cacheKey, { principal, until: now + KEY_CACHE_MS });
    return principal;
  }

  /** Drops the expired entries; all of them when a flood of distinct keys left none expired. */
  private forgetExpired(now: number): void {
    for (const [cacheKey, entry] of this.cache) if (entry.until <= now) this.cache.delete(cacheKey);
    if (this.cache.size >= MAX_CACHED_KEYS) this.cache.clear();
  }
}
