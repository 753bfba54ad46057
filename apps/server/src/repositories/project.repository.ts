import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { DATABASE, type Database } from '../database/database';
import type { DB, KeyManagedBy, KeyScope } from '../database/schema';

export interface NewApiKey {
  readonly projectId: number;
  readonly scope: KeyScope;
  readonly keyHash: Buffer;
  readonly keyPrefix: string;
  readonly managedBy: KeyManagedBy;
  readonly label: string | null;
}

/** Projects and their API keys. Key hashes never leave this repository. */
@Injectable()
export class ProjectRepository {
  private readonly db: Kysely<DB>;

  constructor(@Inject(DATABASE) private readonly database: Database) {
    this.db = database.db;
  }

  /** Runs `work` with a repository bound to one transaction. */
  transaction<T>(work: (repository: ProjectRepository) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => work(new ProjectRepository({ ...this.database, db: trx })));
  }

  /**
   * Serializes the keys a start sets up (env keys, the first project's keys) until this repository's transaction ends:
   * replicas started at once with a new ERRATA_INGEST_KEY each found it missing and inserted it, and the second
   * stopped on the first one's copy (api_key_key_hash_uq).
   */
  async lockKeySetup(): Promise<void> {
    await sql`SELECT pg_advisory_xact_lock(hashtext('errata-key-setup'))`.execute(this.db);
  }

  findProject(name: string) {
    return this.db
      .selectFrom('project')
      .select(['id', 'name', 'store_arguments as storeArguments'])
      .where('name', '=', name)
      .executeTakeFirst();
  }

  /** Whether the project keeps its calls' raw arguments from now on; returns the project as it is then. */
  setStoreArguments(projectId: number, storeArguments: boolean) {
    return this.db
      .updateTable('project')
      .set({ store_arguments: storeArguments })
      .where('id', '=', projectId)
      .returning(['id', 'name', 'store_arguments as storeArguments'])
      .executeTakeFirstOrThrow();
  }

  async listProjectNames(): Promise<string[]> {
    const rows = await this.db.selectFrom('project').select('name').orderBy('name').execute();
    return rows.map((row) => row.name);
  }

  async countProjects(): Promise<number> {
    const row = await this.db
      .selectFrom('project')
      .select(sql<number>`count(*)::int`.as('count'))
      .executeTakeFirstOrThrow();
    return row.count;
  }

  /** Creates the project unless it exists; returns it either way. */
  async ensureProject(name: string) {
    await this.db
      .insertInto('project')
      .values({ name })
      .onConflict((oc) => oc.constraint('project_name_uq').doNothing())
      .execute();
    return this.db
      .selectFrom('project')
      .select(['id', 'name'])
      .where('name', '=', name)
      .executeTakeFirstOrThrow();
  }

  createProject(name: string) {
    return this.db.insertInto('project').values({ name }).returning(['id', 'name']).executeTakeFirstOrThrow();
  }

  insertKey(key: NewApiKey) {
    return this.db
      .insertInto('api_key')
      .values({
        project_id: key.projectId,
        scope: key.scope,
        key_hash: key.keyHash,
        key_prefix: key.keyPrefix,
        managed_by: key.managedBy,
        label: key.label,
      })
      .returning(['id', 'scope', 'key_prefix as keyPrefix'])
      .executeTakeFirstOrThrow();
  }

  /** The live key with this hash, with its project. */
  findLiveKeyByHash(keyHash: Buffer) {
    return this.db
      .selectFrom('api_key')
      .innerJoin('project', 'project.id', 'api_key.project_id')
      .select([
        'api_key.id',
        'api_key.scope',
        'api_key.project_id as projectId',
        'project.name as projectName',
        'project.store_arguments as storeArguments',
      ])
      .where('api_key.key_hash', '=', keyHash)
      .where('api_key.revoked_at', 'is', null)
      .executeTakeFirst();
  }

  listKeys(projectId: number) {
    return this.db
      .selectFrom('api_key')
      .select([
        'id',
        'scope',
        'key_prefix as keyPrefix',
        'managed_by as managedBy',
        'label',
        'created_at as createdAt',
        'revoked_at as revokedAt',
      ])
      .where('project_id', '=', projectId)
      .orderBy('created_at')
      .execute();
  }

  /** Revokes live keys matching the id or the hash; returns what was revoked. */
  revokeKey(match: { id: string } | { keyHash: Buffer }) {
    return this.db
      .updateTable('api_key')
      .set({ revoked_at: sql`now()` })
      .where('revoked_at', 'is', null)
      .$if('id' in match, (qb) => qb.where('id', '=', (match as { id: string }).id))
      .$if('keyHash' in match, (qb) => qb.where('key_hash', '=', (match as { keyHash: Buffer }).keyHash))
      .returning(['id', 'scope', 'key_prefix as keyPrefix'])
      .execute();
  }

  /** Revokes the env and bootstrap keys of a project's scope except the one with `keepHash`. */
  revokeManagedKeysExcept(projectId: number, scope: KeyScope, keepHash: Buffer) {
    return this.db
      .updateTable('api_key')
      .set({ revoked_at: sql`now()` })
      .where('project_id', '=', projectId)
      .where('scope', '=', scope)
      .where('managed_by', 'in', ['env', 'bootstrap'])
      .where('revoked_at', 'is', null)
      .where('key_hash', '!=', keepHash)
      .returning(['key_prefix as keyPrefix', 'managed_by as managedBy'])
      .execute();
  }

  /**
   * Un-revokes (or keeps) an env key; returns false when no row has that hash. The prefix is written again: older
   * versions stored an env key's first characters there.
   */
  async reviveEnvKey(
    projectId: number,
    scope: KeyScope,
    keyHash: Buffer,
    keyPrefix: string,
  ): Promise<boolean> {
    const rows = await this.db
      .updateTable('api_key')
      .set({ revoked_at: null, key_prefix: keyPrefix })
      .where('key_hash', '=', keyHash)
      .where('project_id', '=', projectId)
      .where('scope', '=', scope)
      .returning('id')
      .execute();
    return rows.length > 0;
  }
}
