import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { DATABASE, type Database } from '../database/database';
import type { DB } from '../database/schema';

export interface NewOwner {
  readonly projectId: number;
  readonly serverName: string;
  readonly versionRange: string | null;
  readonly webhookUrl: string;
  readonly contact: string | null;
  readonly secret: string;
}

const COLUMNS = [
  'id',
  'project_id as projectId',
  'server_name as serverName',
  'version_range as versionRange',
  'webhook_url as webhookUrl',
  'contact',
  'secrets',
  sql<string | null>`to_char(disabled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`.as(
    'disabledAt',
  ),
  'disabled_reason as disabledReason',
  sql<string>`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`.as('createdAt'),
] as const;

/** Owners of MCP servers: who gets the fixes for a server, and where. */
@Injectable()
export class OwnerRepository {
  private readonly db: Kysely<DB>;

  constructor(@Inject(DATABASE) database: Database) {
    this.db = database.db;
  }

  create(owner: NewOwner) {
    return this.db
      .insertInto('server_owner')
      .values({
        project_id: owner.projectId,
        server_name: owner.serverName,
        version_range: owner.versionRange,
        webhook_url: owner.webhookUrl,
        contact: owner.contact,
        secrets: [owner.secret],
      })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
  }

  /** The version ranges of a server's owners (null: every version). */
  rangesOf(projectId: number, serverName: string) {
    return this.db
      .selectFrom('server_owner')
      .select(['id', 'version_range as versionRange'])
      .where('project_id', '=', projectId)
      .where('server_name', '=', serverName)
      .execute();
  }

  list(projectId: number) {
    return this.db
      .selectFrom('server_owner')
      .select(COLUMNS)
      .where('project_id', '=', projectId)
      .orderBy('server_name')
      .orderBy('created_at')
      .execute();
  }

  find(projectId: number, id: string) {
    return this.db
      .selectFrom('server_owner')
      .select(COLUMNS)
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  byId(db: Kysely<DB>, id: string) {
    return db.selectFrom('server_owner').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  }

  async remove(projectId: number, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('server_owner')
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numDeletedRows === 1n;
  }

  /** Puts `secret` first; the newest `keep` secrets go on signing, so receivers can switch at their pace. */
  async rotateSecret(projectId: number, id: string, secret: string, keep = 2) {
    return this.db
      .updateTable('server_owner')
      .set({ secrets: sql`(ARRAY[${secret}::text] || secrets)[1:${keep}]` })
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .returning(COLUMNS)
      .executeTakeFirst();
  }

  async enable(id: string): Promise<void> {
    await this.setDisabled(this.db, id, null);
  }

  async setDisabled(db: Kysely<DB>, id: string, reason: string | null) {
    await db
      .updateTable('server_owner')
      .set({ disabled_at: reason === null ? null : sql`now()`, disabled_reason: reason })
      .where('id', '=', id)
      .execute();
  }
}

export type Owner = Awaited<ReturnType<OwnerRepository['create']>>;
