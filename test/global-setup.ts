import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import { Client, Pool } from 'pg';
import type { TestProject } from 'vitest/node';
import { migrateToLatest } from '../apps/server/src/database/migrations';
import { adminDatabaseUrl, databaseUrlFor } from './support/postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
    /** The directory of the run's template embedded store, made by the first test that needs it. */
    pgliteTemplate: string;
  }
}

/**
 * Migrates one template database per run; each spec file then gets its own copy
 * (CREATE DATABASE … TEMPLATE), so files run in parallel without sharing rows. Gives the run a directory for the
 * template embedded store too (pglite-template.ts).
 */
export default async function setup(project: TestProject) {
  const pgliteRoot = await mkdtemp(join(tmpdir(), 'errata-pglite-template-'));
  project.provide('pgliteTemplate', pgliteRoot);
  const template = `errata_tpl_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: adminDatabaseUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${template}`);
  const db = new Kysely<never>({
    dialect: new PostgresDialect({ pool: new Pool({ connectionString: databaseUrlFor(template) }) }),
  });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
  project.provide('templateDatabase', template);
  return async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    await admin.end();
    await rm(pgliteRoot, { recursive: true, force: true });
  };
}
