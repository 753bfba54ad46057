import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { DATABASE, type Database } from '../database/database';
import type { DB } from '../database/schema';

/**
 * The tables the projector reads by trace and writes in every batch. Not `event`: it is read in log order through
 * its own index, and its wide rows make sampling it the slowest part of an ANALYZE.
 */
export const PROJECTION_TABLES = [
  'span_edge',
  'tool_call',
  'agent_run',
  'escalation',
  'subagent_report',
  'contribution',
  'call_rollup',
  'finding_rollup',
  'report_rollup',
] as const;

/** The planner's statistics of the projection tables. */
@Injectable()
export class StatisticsRepository {
  private readonly db: Kysely<DB>;

  constructor(@Inject(DATABASE) database: Database) {
    this.db = database.db;
  }

  /** Rows the planner believes `contribution` holds (0 before it was ever analyzed). */
  async contributionRowsEstimate(): Promise<number> {
    const { rows } = await sql<{ rows: number }>`
      SELECT greatest(reltuples, 0)::float8 AS rows FROM pg_class WHERE oid = 'contribution'::regclass`.execute(
      this.db,
    );
    return Number(rows[0]?.rows ?? 0);
  }

  /** One table a statement, each well within ERRATA_PG_QUERY_TIMEOUT_MS; the first that fails ends it. */
  async analyze(): Promise<void> {
    for (const table of PROJECTION_TABLES) await sql`ANALYZE ${sql.table(table)}`.execute(this.db);
  }
}
