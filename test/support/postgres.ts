import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';

const execFileAsync = promisify(execFile);

/** The server the tests use: DATABASE_URL (what CI sets), else the machine's local PostgreSQL. */
export function adminDatabaseUrl(): string {
  return process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
}

export function databaseUrlFor(name: string): string {
  const url = new URL(adminDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

async function withAdmin<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: adminDatabaseUrl() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own for one spec file, with `settings` of its own (ALTER DATABASE … SET). */
export async function createTestDatabase(
  template: string,
  settings: Readonly<Record<string, string>> = {},
): Promise<TestDatabase> {
  const name = `errata_test_${randomBytes(5).toString('hex')}`;
  await withAdmin(async (client) => {
    await client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    for (const [setting, value] of Object.entries(settings)) {
      await client.query(`ALTER DATABASE ${name} SET ${setting} = '${value}'`);
    }
  });
  return {
    name,
    url: databaseUrlFor(name),
    drop: () =>
      withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
}

/**
 * Runs `work` while a transaction with an id stays open on `databaseUrl`'s server: whatever is committed meanwhile
 * lies above the log's horizon (`pg_snapshot_xmin`), unreadable to every projector on that server, as the later part
 * of a log is while a long transaction runs. Every database of the server waits too, other test files' included:
 * keep `work` short.
 */
export async function withLogHorizonHeld<T>(databaseUrl: string, work: () => Promise<T>): Promise<T> {
  const holder = new Client({ connectionString: databaseUrl });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT pg_current_xact_id()');
    return await work();
  } finally {
    await holder.query('ROLLBACK');
    await holder.end();
  }
}

/**
 * Runs `work` while `databaseUrl`'s database takes no connection (`ALLOW_CONNECTIONS false`, SQLSTATE 55000 to
 * whoever tries) and its open connections are ended: the database away for every statement. Run from the server's
 * `postgres` database, since this one refuses meanwhile.
 */
export async function withConnectionsRefused<T>(databaseUrl: string, work: () => Promise<T>): Promise<T> {
  const url = new URL(databaseUrl);
  const database = url.pathname.slice(1);
  url.pathname = '/postgres';
  const onPostgres = async (text: string) => {
    const admin = new Client({ connectionString: url.toString() });
    await admin.connect();
    try {
      await admin.query(text);
    } finally {
      await admin.end();
    }
  };
  await onPostgres(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS false`);
  try {
    await onPostgres(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${database}' AND pid <> pg_backend_pid()`,
    );
    return await work();
  } finally {
    await onPostgres(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`);
  }
}

/** A PostgreSQL server of its own for one test, from the machine's PostgreSQL binaries; gone once stopped. */
export interface ThrowawayCluster {
  /** A connection string to database `name` on it. */
  urlFor(name: string): string;
  /** The machine's PostgreSQL program `name` (pg_dump, pg_restore, …), of the version this cluster runs. */
  bin(name: string): string;
  stop(): Promise<void>;
}

/** The newest Debian PostgreSQL binaries on the machine (`/usr/lib/postgresql/<major>/bin`), as CI installs them. */
function postgresBinaries(): string {
  const root = '/usr/lib/postgresql';
  const majors = readdirSync(root)
    .filter((major) => existsSync(join(root, major, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  if (majors.length === 0) throw new Error(`no PostgreSQL binaries (initdb) under ${root}`);
  return join(root, majors[0]!, 'bin');
}

/**
 * Starts a fresh PostgreSQL cluster on a free port (trust authentication, 127.0.0.1 only) whose transaction ids begin
 * at `epoch` × 2³² (pg_resetwal -e): far above those of any server the suite runs on, as on a server that has run
 * for years. Run as the `postgres` user when this process is root (PostgreSQL refuses to run as root).
 */
export async function startThrowawayCluster(epoch: number): Promise<ThrowawayCluster> {
  const bin = postgresBinaries();
  const dir = await mkdtemp(join(tmpdir(), 'errata-cluster-'));
  const asRoot = process.getuid?.() === 0;
  const run = (program: string, ...args: string[]) =>
    asRoot
      ? execFileAsync('runuser', ['-u', 'postgres', '--', join(bin, program), ...args])
      : execFileAsync(join(bin, program), args);
  if (asRoot) await execFileAsync('chown', ['postgres', dir]);
  const data = join(dir, 'data');
  const port = await freePort();
  await run('initdb', '-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8');
  await run('pg_resetwal', '-e', String(epoch), data);
  await run(
    'pg_ctl',
    '-D',
    data,
    '-l',
    join(dir, 'log'),
    '-w',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
    'start',
  );
  return {
    urlFor: (name) => `postgres://postgres@127.0.0.1:${port}/${name}`,
    bin: (name) => join(bin, name),
    async stop() {
      await run('pg_ctl', '-D', data, '-m', 'immediate', '-w', 'stop').catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
