// Bench databases on the base Postgres URL, and the row counts / checksums the runs check themselves against.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { BASE_URL, MIGRATIONS_DIR, PROJECTION_TIMEOUT_MS } from './settings.mjs';

const require = createRequire(import.meta.url);
const pg = require('pg');

/** Created and not yet dropped, so an interrupted or failed invocation can still drop them. */
export const benchDatabases = new Set();

export function urlFor(database) {
  const url = new URL(BASE_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function withClient(database, fn) {
  const client = new pg.Client({ connectionString: database ? urlFor(database) : BASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function createDatabase() {
  const name = `errata_bench_${randomBytes(6).toString('hex')}`;
  await withClient(null, (c) => c.query(`CREATE DATABASE "${name}"`));
  benchDatabases.add(name);
  return name;
}

export async function dropDatabase(name) {
  await withClient(null, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  benchDatabases.delete(name);
}

/** Flushes dirty buffers before a timed phase, so one run's checkpoint does not land in the next one. */
export async function checkpoint() {
  await withClient(null, (c) => c.query('CHECKPOINT'));
}

/** The same files the server's migrator applies, in the same (name) order, each in its own transaction. */
export async function migrate(database) {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((file) => file.endsWith('.sql'))
    .sort();
  await withClient(database, async (c) => {
    for (const file of files) {
      await c.query('BEGIN');
      await c.query(readFileSync(join(MIGRATIONS_DIR, file), 'utf8'));
      await c.query('COMMIT');
    }
  });
}

/**
 * Order-independent fingerprint of the event rows (all server-written columns; received_at, global_position and
 * transaction_id excluded); `measuredOnly` leaves out the warm-up spans (trace ids starting with byte 00).
 */
const FINGERPRINT_SQL = `
  SELECT count(*)::bigint AS n,
         coalesce(sum(hashtextextended(concat_ws('|', project_id, encode(trace_id, 'hex'), encode(span_id, 'hex'),
             extract(epoch FROM start_time)::text, extract(epoch FROM end_time)::text,
             coalesce(encode(parent_span_id, 'hex'), '-'), type, coalesce(server_name, '-'), coalesce(tool_name, '-'),
             coalesce(outcome, '-'), data::text), 0)::numeric), 0)::text AS checksum
    FROM event WHERE get_byte(trace_id, 0) <> 0`;

export async function fingerprint(database) {
  const { rows } = await withClient(database, (c) => c.query(FINGERPRINT_SQL));
  return { rows: Number(rows[0].n), checksum: rows[0].checksum };
}

const TOOL_CALL_COUNT_SQL = 'SELECT count(*)::bigint AS n FROM tool_call';

export async function countToolCalls(database) {
  const { rows } = await withClient(database, (c) => c.query(TOOL_CALL_COUNT_SQL));
  return Number(rows[0].n);
}

/** Whether the projector has applied every stored event and span edge: two index probes past the checkpoints. */
const PROJECTION_DONE = `
         NOT EXISTS (SELECT 1 FROM event
                      WHERE (transaction_id, global_position) >
                            (SELECT transaction_id, global_position FROM projection_checkpoint WHERE name = 'read-models'))
         AND NOT EXISTS (SELECT 1 FROM span_edge
                      WHERE (transaction_id, global_position) >
                            (SELECT transaction_id, global_position FROM projection_checkpoint WHERE name = 'span-edges'))`;

export const PROJECTION_DONE_SQL = `SELECT ${PROJECTION_DONE} AS done`;

/** The same with the last event's and the checkpoint's positions, for progress (max() reads the whole log). */
export const PROJECTION_POSITIONS_SQL = `
  SELECT (SELECT max(global_position) FROM event)::bigint AS last,
         (SELECT global_position FROM projection_checkpoint WHERE name = 'read-models')::bigint AS projected,
         ${PROJECTION_DONE} AS done`;

/**
 * Seconds until the projector has applied every stored event and tool_call holds `expected` rows, or null after
 * PROJECTION_TIMEOUT_MS. Polls the checkpoints every 50 ms on one connection and counts the rows once at the end,
 * so that the waiting takes next to nothing from the projector it times.
 */
export async function waitForProjection(database, expected) {
  const started = performance.now();
  return withClient(database, async (client) => {
    for (;;) {
      const { rows } = await client.query(PROJECTION_DONE_SQL);
      if (rows[0].done) {
        const seconds = (performance.now() - started) / 1000;
        const { rows: counted } = await client.query(TOOL_CALL_COUNT_SQL);
        if (Number(counted[0].n) >= expected) return seconds;
      }
      if (performance.now() - started > PROJECTION_TIMEOUT_MS) return null;
      await sleep(50);
    }
  });
}

export async function countEvents(database) {
  const { rows } = await withClient(database, (c) => c.query('SELECT count(*)::bigint AS n FROM event'));
  return Number(rows[0].n);
}
