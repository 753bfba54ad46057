import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { sql, type Kysely } from 'kysely';
import { inject } from 'vitest';
import { loadConfig } from '../../apps/server/src/config/app-config';
import { DATABASE, type Database } from '../../apps/server/src/database/database';
import type { DB } from '../../apps/server/src/database/schema';
import { startServer } from '../../apps/server/src/start-server';
import { ProjectorService } from '../../apps/server/src/services/projector.service';
import { seedEmbeddedStore } from './embedded-store';
import { createTestDatabase } from './postgres';

export type Store = 'postgres' | 'pglite';

export interface TestServer {
  readonly url: string;
  readonly ingestKey: string;
  readonly readKey: string;
  readonly db: Kysely<DB>;
  /** The server's own PostgreSQL database, for a second connection; null on PGlite. */
  readonly databaseUrl: string | null;
  readonly app: NestExpressApplication;
  /** Projects everything committed so far into the read models. */
  catchUp(): Promise<number>;
  close(): Promise<void>;
}

/**
 * The real service, in process, on an ephemeral port, with a database (or PGlite directory) of its own; on PostgreSQL
 * with the database's own `databaseSettings` (ALTER DATABASE … SET), as a DBA may have set them.
 */
export async function startTestServer(
  store: Store,
  env: Record<string, string> = {},
  databaseSettings: Readonly<Record<string, string>> = {},
): Promise<TestServer> {
  const database =
    store === 'postgres' ? await createTestDatabase(inject('templateDatabase'), databaseSettings) : null;
  const server = await startTestServerOn(database?.url ?? null, env);
  return {
    ...server,
    async close() {
      await server.close();
      await database?.drop();
    },
  };
}

/**
 * The real service, in process, as `startTestServer` starts it, on PostgreSQL database `databaseUrl` (which it leaves
 * in place when it closes), or on a PGlite directory of its own (null).
 */
export async function startTestServerOn(
  databaseUrl: string | null,
  env: Record<string, string> = {},
): Promise<TestServer> {
  const ingestKey = `test-ingest-${randomBytes(8).toString('hex')}`;
  const readKey = `test-read-${randomBytes(8).toString('hex')}`;
  const dataDir = await mkdtemp(join(tmpdir(), 'errata-test-'));
  // A new embedded store of its own; a store the test passes (ERRATA_DATA_DIR) is left as the test made it.
  if (databaseUrl === null && env['ERRATA_DATA_DIR'] === undefined) await seedEmbeddedStore(dataDir);
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    ERRATA_DATA_DIR: dataDir,
    ERRATA_INGEST_KEY: ingestKey,
    ERRATA_READ_KEY: readKey,
    ...(databaseUrl === null ? {} : { DATABASE_URL: databaseUrl }),
    ...env,
  });
  const app = await startServer(config, ['warn', 'error']); // quiet: the suite's output stays readable
  const address = app.getHttpServer().address() as { port: number };
  const projector = app.get(ProjectorService);
  return {
    url: `http://127.0.0.1:${address.port}`,
    ingestKey,
    readKey,
    db: app.get<Database>(DATABASE).db,
    databaseUrl,
    app,
    catchUp: () => projector.settle(),
    async close() {
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The id of the `default` project, which the server makes at its first start. */
export async function defaultProjectId(db: Kysely<DB>): Promise<number> {
  const { id } = await db
    .selectFrom('project')
    .select('id')
    .where('name', '=', 'default')
    .executeTakeFirstOrThrow();
  return id;
}

/** The records the projector set aside (`projection_skip`), oldest first. */
export function setAsideRecords(db: Kysely<DB>) {
  return db
    .selectFrom('projection_skip')
    .select([
      'projection',
      sql<string>`transaction_id::text`.as('transactionId'),
      sql<string>`global_position::text`.as('globalPosition'),
      'project_id as projectId',
      'error',
    ])
    .orderBy('id')
    .execute();
}

/** Events in the log, oldest first, with hex ids. */
export function listEvents(db: Kysely<DB>) {
  return db
    .selectFrom('event')
    .select([
      sql<string>`encode(trace_id, 'hex')`.as('traceId'),
      sql<string>`encode(span_id, 'hex')`.as('spanId'),
      sql<string | null>`encode(parent_span_id, 'hex')`.as('parentSpanId'),
      'type',
      'server_name as serverName',
      'tool_name as toolName',
      'outcome',
      'data',
    ])
    .orderBy('global_position')
    .execute();
}

/** POSTs spans to a server's OTLP endpoint as the OTel JS protobuf exporter does; resolves with the HTTP status. */
export async function sendSpans(url: string, ingestKey: string, spans: ReadableSpan[]): Promise<number> {
  const response = await fetch(`${url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf', authorization: `Bearer ${ingestKey}` },
    body: ProtobufTraceSerializer.serializeRequest(spans)!,
  });
  await response.arrayBuffer();
  return response.status;
}

/** An MCP client of Errata's own endpoint (`/mcp`), connected with `key`. */
export async function connectErrataMcp(url: string, key: string, name = 'errata-e2e'): Promise<Client> {
  const mcp = new Client({ name, version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return mcp;
}
