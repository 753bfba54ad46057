import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { mkdir, mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LOCK_STALE_MS, lockEmbeddedStore, processIdentity } from '../apps/server/src/database/database';
import { AgentTrace } from './support/agent-spans';
import { CLI, runCli } from './support/cli';
import { seedEmbeddedStore } from './support/embedded-store';
import { createTestDatabase, type TestDatabase } from './support/postgres';
import { SERVER_ENTRY, spawnServer } from './support/server-process';
import { until } from './support/until';

const run = promisify(execFile);

const cli = (database: TestDatabase, ...args: string[]) => runCli(database.url, ...args);

const body = () => {
  const t0 = Date.UTC(2026, 10, 30, 14);
  return ProtobufTraceSerializer.serializeRequest(
    new AgentTrace().run('cli', t0, [{ tool: 'x', startMs: t0, durationMs: 1 }]),
  )!;
};

async function ingest(url: string, key: string) {
  const response = await fetch(`${url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf', authorization: `Bearer ${key}` },
    body: body(),
  });
  return response.status;
}

async function countRows(database: TestDatabase, table: string, where = 'true'): Promise<number> {
  const client = new Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${table} WHERE ${where}`,
    );
    return rows[0]!.n;
  } finally {
    await client.end();
  }
}

async function query(database: TestDatabase, text: string, values: unknown[]): Promise<void> {
  const client = new Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(text, values);
  } finally {
    await client.end();
  }
}

async function readReport(url: string, key: string) {
  const response = await fetch(`${url}/api/v1/reports/retry-waste`, {
    headers: { authorization: `Bearer ${key}` },
  });
  return response.status;
}

describe('projects and keys', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(inject('templateDatabase'));
  });
  afterAll(() => database.drop());

  it('first start on an empty database creates project default and prints its keys once', async () => {
    // A first start that cannot listen (the port is taken, as 4318 often is by a local collector) creates nothing:
    // its output, the only place the keys would be shown, belongs to a run that failed.
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const failed = await run(process.execPath, [SERVER_ENTRY], {
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        HOST: '127.0.0.1',
        PORT: String((taken.address() as { port: number }).port),
      },
    }).then(
      () => null,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    taken.close();
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toMatch(/Errata failed to start: .*EADDRINUSE/);
    expect(failed?.stdout).not.toMatch(/errata_(ingest|read|admin)_/);
    expect(await countRows(database, 'api_key')).toBe(0);

    // A first start cut off while it creates the keys (here its third key's insert fails, as a kill or a lost database
    // would end it) leaves neither the project nor a key nobody saw: the next start makes and prints all three.
    await query(
      database,
      `CREATE FUNCTION refuse_admin_key() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN RAISE EXCEPTION 'cut off'; END $$`,
      [],
    );
    await query(
      database,
      `CREATE TRIGGER refuse_admin_key BEFORE INSERT ON api_key FOR EACH ROW WHEN (NEW.scope = 'admin')
         EXECUTE FUNCTION refuse_admin_key()`,
      [],
    );
    const cutOff = await run(process.execPath, [SERVER_ENTRY], {
      env: { ...process.env, DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: '0' },
    }).then(
      () => null,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    await query(database, 'DROP TRIGGER refuse_admin_key ON api_key', []);
    await query(database, 'DROP FUNCTION refuse_admin_key()', []);
    expect(cutOff?.stderr).toMatch(/Errata failed to start: .*cut off/);
    expect(cutOff?.stdout).not.toMatch(/errata_(ingest|read|admin)_/);
    expect(await countRows(database, 'project')).toBe(0);
    expect(await countRows(database, 'api_key')).toBe(0);

    const first = await spawnServer({ DATABASE_URL: database.url });
    // Output is read as it comes: the server may answer /readyz a moment before it has said everything.
    await until('the listening line', () => /listening on/.test(first.output()));
    const printed = [...first.output().matchAll(/^\s+(ingest|read|admin)\s+(errata_\S+)$/gm)].map((m) => [
      m[1],
      m[2],
    ]);
    expect(first.output()).toMatch(
      /listening on http:\/\/127\.0\.0\.1:\d+ .*store: PostgreSQL at postgres:\/\//,
    );
    const keys = Object.fromEntries(printed) as Record<string, string>;
    expect(Object.keys(keys).sort()).toEqual(['admin', 'ingest', 'read']);
    expect(await ingest(first.url, keys.ingest!)).toBe(200);
    expect(await readReport(first.url, keys.read!)).toBe(200);
    expect(await readReport(first.url, keys.ingest!)).toBe(403); // ingest keys cannot read
    expect(await ingest(first.url, keys.read!)).toBe(403); // read keys cannot ingest
    first.child.kill('SIGTERM');
    await once(first.child, 'exit');

    const second = await spawnServer({ DATABASE_URL: database.url });
    expect(second.output()).not.toMatch(/errata_ingest_/);
    expect(second.output()).not.toContain('\u001b['); // no colours where the output is not a terminal
    expect(await ingest(second.url, keys.ingest!)).toBe(200);

    // The CLI: a new read key works at once; revoked, it is refused.
    const created = await cli(
      database,
      'keys',
      'create',
      '--project',
      'default',
      '--scope',
      'read',
      '--label',
      'dashboard',
    );
    expect(created.code).toBe(0);
    const newKey = created.stdout.trim().split('\n').at(-1)!;
    expect(newKey).toMatch(/^errata_read_/);
    expect(await readReport(second.url, newKey)).toBe(200);
    const listed = await cli(database, 'keys', 'list', '--project', 'default');
    expect(listed.stdout).toMatch(/read\s+errata_read_\S+…\s+cli\s+live\s+dashboard/);
    const revoked = await cli(database, 'keys', 'revoke', '--key', newKey);
    expect(revoked.stdout).toMatch(/revoked read key/);
    // Refused once the key cache, which trusts a verified key for 5 s, asks again: within those 5 s of the revocation
    const answered = await until(
      'the key cache to ask again',
      async () => {
        const status = await readReport(second.url, newKey);
        return status !== 200 && status;
      },
      5_100,
    );
    expect(answered).toBe(401);
    second.child.kill('SIGTERM');
    await once(second.child, 'exit');
  }, 60_000);

  it('ERRATA_LOG_FORMAT=json: every line of the log is one JSON object, the first keys included', async () => {
    const empty = await createTestDatabase(inject('templateDatabase'));
    const server = await spawnServer({ DATABASE_URL: empty.url, ERRATA_LOG_FORMAT: 'json' });
    await until('the listening line', () => /listening on/.test(server.output()));
    server.child.kill('SIGTERM');
    await once(server.child, 'exit');
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line.trim() !== '');
    const records = lines.map(
      (line) => JSON.parse(line) as { level: string; context?: string; message: string },
    );
    expect(records.find((record) => /listening on/.test(record.message))).toMatchObject({
      level: 'log',
      context: 'Errata',
    });
    const keys = records.find((record) => record.context === 'Keys') as { keys?: Record<string, string> };
    expect(Object.keys(keys?.keys ?? {}).sort()).toEqual(['admin', 'ingest', 'read']);
    // The stop is said too, when it begins and once the database is closed.
    expect(records.map((record) => record.message)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^SIGTERM: stopping/), 'stopped']),
    );
    await empty.drop();
  });

  it('ERRATA_INGEST_KEY / ERRATA_READ_KEY: project default has exactly those keys; a changed key replaces the old', async () => {
    const env = {
      DATABASE_URL: database.url,
      ERRATA_INGEST_KEY: 'env-ingest-key-one',
      ERRATA_READ_KEY: 'env-read-key-number-1',
    };
    const first = await spawnServer(env);
    // No key is made and printed; the bootstrap keys earlier tests made are revoked, named by their prefix only
    expect(first.output()).not.toMatch(/errata_ingest_[\w-]{32}/);
    expect(first.output()).not.toContain('Created project');
    expect(await ingest(first.url, 'env-ingest-key-one')).toBe(200);
    expect(await readReport(first.url, 'env-read-key-number-1')).toBe(200);
    first.child.kill('SIGTERM');
    await once(first.child, 'exit');

    const second = await spawnServer({ ...env, ERRATA_INGEST_KEY: 'env-ingest-key-two' });
    expect(await ingest(second.url, 'env-ingest-key-two')).toBe(200);
    expect(await ingest(second.url, 'env-ingest-key-one')).toBe(401);
    expect(await readReport(second.url, 'env-read-key-number-1')).toBe(200);
    // The replaced key is named in the log, by the start of its hash: its exporters are refused from now on
    const oldKey = `sha256:${createHash('sha256').update('env-ingest-key-one').digest('hex').slice(0, 8)}…`;
    expect(second.output()).toContain(
      `ERRATA_INGEST_KEY replaced the earlier ingest key of project default, now revoked: ${oldKey} (env)`,
    );
    expect(second.output()).not.toMatch(/replaced the earlier read key/);
    second.child.kill('SIGTERM');
    await once(second.child, 'exit');
    const listed = await cli(database, 'keys', 'list', '--project', 'default');
    const liveEnvKeys = listed.stdout
      .split('\n')
      .filter((line) => /\benv\b/.test(line) && /\blive\b/.test(line));
    expect(liveEnvKeys).toHaveLength(2);
  }, 60_000);

  it('stores and lists an env key by the start of its hash, never by its own characters, also for a row an older version stored', async () => {
    const ingestKey = randomBytes(12).toString('hex');
    const readKey = randomBytes(12).toString('hex');
    const env = { DATABASE_URL: database.url, ERRATA_INGEST_KEY: ingestKey, ERRATA_READ_KEY: readKey };
    const fingerprint = (key: string) =>
      `sha256:${createHash('sha256').update(key).digest('hex').slice(0, 8)}`;
    const first = await spawnServer(env);
    first.child.kill('SIGTERM');
    await once(first.child, 'exit');
    // Older versions stored the key's first 8 characters; the next start writes the prefix again.
    await query(
      database,
      `UPDATE api_key SET key_prefix = left($1, 8) WHERE label = 'ERRATA_READ_KEY' AND revoked_at IS NULL`,
      [readKey],
    );
    const second = await spawnServer(env);
    second.child.kill('SIGTERM');
    await once(second.child, 'exit');

    const listed = await cli(database, 'keys', 'list', '--project', 'default');
    for (const key of [ingestKey, readKey]) {
      expect(listed.stdout).toContain(`${fingerprint(key)}…`);
      expect(listed.stdout).not.toContain(key.slice(0, 6));
    }

    // A key the operator replaced is revoked, not rewritten by the start: migration 0012 hides what an older version
    // stored of it (run again here, as on a database it has not been applied to, with those after it: Kysely applies
    // migrations in order)
    const replaced = randomBytes(12).toString('hex');
    const third = await spawnServer({ ...env, ERRATA_READ_KEY: replaced });
    third.child.kill('SIGTERM');
    await once(third.child, 'exit');
    await query(
      database,
      `UPDATE api_key SET key_prefix = left($1, 8) WHERE label = 'ERRATA_READ_KEY' AND revoked_at IS NOT NULL`,
      [readKey],
    );
    await query(database, `DELETE FROM kysely_migration WHERE name >= '0012_env_key_prefix'`, []);
    const revoked = await cli(database, 'keys', 'list', '--project', 'default');
    expect(revoked.stdout).toContain(`${fingerprint(readKey)}…`);
    expect(revoked.stdout).not.toContain(readKey.slice(0, 6));
  }, 60_000);

  it.each([
    ['ERRATA_READ_KEY', 'pw12'],
    ['ERRATA_INGEST_KEY', 'abc'],
    ['ERRATA_INGEST_KEY', '15-characters-x'],
  ])(
    'refuses to start with %s = "%s": a key shorter than 16 characters',
    async (variable, key) => {
      const before = await countRows(database, 'api_key');
      const failure = await spawnServer({ DATABASE_URL: database.url, [variable]: key }).then(
        async (started) => {
          started.child.kill('SIGTERM');
          await once(started.child, 'exit');
          return 'it started';
        },
        (error: Error) => error.message,
      );
      expect(failure).toMatch(
        new RegExp(
          `Errata failed to start: ${variable} must be at least 16 characters long, got ${key.length}`,
        ),
      );
      expect(failure).not.toContain(key);
      expect(await countRows(database, 'api_key')).toBe(before);
    },
    60_000,
  );

  it('npm run projections:rebuild replays the log into the read models with progress output', async () => {
    const events = await countRows(database, 'event');
    const edges = await countRows(database, 'span_edge');
    expect(events).toBeGreaterThan(0);
    const rebuilt = await cli(database, 'projections', 'rebuild');
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.stderr).toMatch(/rebuilding read models and rollups \[#+\] 100% \d+\/\d+/);
    expect(rebuilt.stdout).toMatch(
      new RegExp(`rebuilt read models and rollups from ${events + edges} events and span edges`),
    );
    expect(await countRows(database, 'tool_call')).toBe(
      await countRows(database, 'event', "type = 'ToolCallObserved'"),
    );
    expect(await countRows(database, 'contribution', "kind = 'call' AND part = 'call'")).toBe(
      await countRows(database, 'tool_call'),
    );
    expect(await countRows(database, 'call_rollup', 'bucket_hours = 24')).toBeGreaterThan(0);
  });

  it('owners add / list register who gets the fixes; fixes acknowledge needs a fix to exist', async () => {
    // Empty lists: nothing on stdout (scripts read it), and on stderr how the list gets its first entry.
    const noOwners = await cli(database, 'owners', 'list', '--project', 'default');
    expect(noOwners.stdout).toBe('');
    expect(noOwners.stderr).toMatch(/project "default" has no owners yet; add one with: owners add/);
    const noFixes = await cli(database, 'fixes', 'list', '--project', 'default');
    expect(noFixes.stdout).toBe('');
    expect(noFixes.stderr).toMatch(
      /project "default" has no fixes yet: a finding becomes a fix once its server/,
    );
    const added = await cli(
      database,
      'owners',
      'add',
      '--project',
      'default',
      '--server',
      'orders',
      '--url',
      'https://hooks.example.com/errata',
      '--version-range',
      '>=1.2.0 <2',
      '--contact',
      'ops@example.com',
    );
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(
      /registered owner [0-9a-f-]{36} of server "orders" → https:\/\/hooks\.example\.com\/errata/,
    );
    expect(added.stdout).toMatch(/signing secret \(shown only now\): whsec_\S+/);
    const listed = await cli(database, 'owners', 'list', '--project', 'default');
    // The range as stored: canonical, its versions whole
    expect(listed.stdout).toMatch(
      /orders >=1\.2\.0 <2\.0\.0 {2}https:\/\/hooks\.example\.com\/errata {2}enabled/,
    );
    expect(listed.stdout).not.toMatch(/whsec_/);
    const badRange = await cli(
      database,
      'owners',
      'add',
      '--project',
      'default',
      '--server',
      'x',
      '--url',
      'https://h.example',
      '--version-range',
      'latest',
    );
    expect(badRange.code).toBe(2);
    expect(badRange.stderr).toMatch(/^errata: "versionRange" must be comparators/);
    // A webhook URL every delivery would be refused for (SSRF guard on) is refused at once
    for (const url of ['http://hooks.example.com/errata', 'https://[::ffff:127.0.0.1]/errata']) {
      const refused = await cli(
        database,
        'owners',
        'add',
        '--project',
        'default',
        '--server',
        'y',
        '--url',
        url,
      );
      expect(refused.code, url).toBe(2);
      expect(refused.stderr).toMatch(
        /^errata: "webhookUrl" is refused: .*ERRATA_WEBHOOK_ALLOW_INTERNAL=true/,
      );
    }
    const noFix = await cli(
      database,
      'fixes',
      'acknowledge',
      '--project',
      'default',
      '--finding',
      'ffffffffffffffffffff',
    );
    expect(noFix.code).toBe(2);
    expect(noFix.stderr).toMatch(
      /no finding ffffffffffffffffffff in project "default" \(GET \/api\/v1\/findings/,
    );
  });

  it('the CLI explains bad input and exits non-zero', async () => {
    const noProject = await cli(database, 'keys', 'create', '--project', 'nope', '--scope', 'read');
    expect(noProject.code).toBe(2);
    expect(noProject.stderr).toMatch(/project "nope" does not exist; create it with/);
    const badScope = await cli(database, 'keys', 'create', '--project', 'default', '--scope', 'root');
    expect(badScope.stderr).toMatch(/--scope must be one of ingest, read, admin/);
    const unknown = await cli(database, 'frobnicate');
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"/);
    // Said before the database is opened: an unreachable one is not waited for, and no embedded store is made.
    const typo = await cli({ url: 'postgres://postgres@127.0.0.1:1/errata' } as TestDatabase, 'kyes', 'list');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^errata: unknown command "kyes list"/);
    const noValue = await cli(database, 'keys', 'list', '--project');
    expect(noValue.code).toBe(2);
    expect(noValue.stderr).toMatch(/^errata: Option '--project <value>' argument missing/);
    expect((await cli(database, 'help')).stdout).toMatch(/^Usage: npm run errata -- <command>/);
    const revokeNothing = await cli(database, 'keys', 'revoke', '--key', 'no-such-key');
    expect(revokeNothing.stderr).toMatch(/no live key matches/);
    // An option given twice is refused, not read as its last value (an admin key for --scope read --scope admin)
    const twice = await cli(
      database,
      'keys',
      'create',
      '--project',
      'default',
      '--scope',
      'read',
      '--scope',
      'admin',
    );
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/^errata: --scope must be given once/);
    expect(twice.stdout).toBe('');
    // A command group alone names its subcommands
    const group = await cli(database, 'keys');
    expect(group.code).toBe(2);
    expect(group.stderr).toMatch(/^errata: keys needs a subcommand: create, list, revoke/);
  }, 60_000); // eleven CLI processes, each loading the CLI and opening the database

  it('a database that does not answer, or a DATABASE_URL that is no URL, is said in one line by the server and the CLI', async () => {
    const start = (url: string) =>
      run(process.execPath, [SERVER_ENTRY], {
        env: { ...process.env, DATABASE_URL: url, HOST: '127.0.0.1', PORT: '0' },
      }).then(
        () => ({ code: 0, stdout: '', stderr: '' }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
    const list = (url: string) => cli({ url } as TestDatabase, 'keys', 'list', '--project', 'default');
    const down = 'postgres://postgres:hunter22@127.0.0.1:1/errata';
    const unreachable =
      /cannot reach PostgreSQL at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/errata: connect ECONNREFUSED 127\.0\.0\.1:1 \(is it running, and is DATABASE_URL right\?\)/;
    for (const [run, prefix] of [
      [start, 'Errata failed to start: '],
      [list, 'errata: '],
    ] as const) {
      const refused = await run(down);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(unreachable);
      expect(refused.stderr).toContain(prefix);
      expect(refused.stdout + refused.stderr).not.toMatch(/hunter22|ExceptionHandler|\n\s+at /);
      const notUrl = await run('notaurl');
      expect(notUrl.stderr).toContain('DATABASE_URL must be a PostgreSQL URL such as postgres://');
      expect(notUrl.stdout + notUrl.stderr).not.toMatch(/\n\s+at /);
    }
  });
});

describe('the CLI on the embedded store', () => {
  it('refuses while an Errata server has it open (a key it made would be lost), and works once it stopped', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'errata-cli-pglite-'));
    await seedEmbeddedStore(dataDir);
    const env = { ...process.env, ERRATA_DATA_DIR: dataDir };
    delete env['DATABASE_URL'];
    const cliOnPglite = (...args: string[]) =>
      run(process.execPath, [CLI, ...args], { env }).then(
        ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
    let server: Awaited<ReturnType<typeof spawnServer>> | undefined;
    try {
      server = await spawnServer({ ERRATA_DATA_DIR: dataDir, DATABASE_URL: '' });
      // The first start's hint for more keys says what the CLI needs here, before a user runs into the refusal.
      const started = server;
      await until('the first keys', () => started.output().includes('More keys:'));
      expect(server.output()).toContain(
        'More keys: stop this server, then npm run errata -- keys create --project default --scope read',
      );
      const refused = await cliOnPglite('keys', 'create', '--project', 'default', '--scope', 'read');
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`is open in process ${server.child.pid} (an Errata server?)`);
      // A second server on the same store is refused too.
      await expect(spawnServer({ ERRATA_DATA_DIR: dataDir, DATABASE_URL: '' })).rejects.toThrow(
        /the embedded database in \S+ is open in process/,
      );
      server.child.kill('SIGTERM');
      await once(server.child, 'exit');
      const created = await cliOnPglite('keys', 'create', '--project', 'default', '--scope', 'read');
      expect(created.code).toBe(0);
      expect(created.stdout).toMatch(/errata_read_/);
    } finally {
      if (server !== undefined && server.child.exitCode === null) server.child.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('takes over a lock left by a dead holder whose pid now belongs to another process; refuses a live holder, and one of another host', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'errata-stale-lock-'));
    await seedEmbeddedStore(dataDir);
    const env = { ...process.env, ERRATA_DATA_DIR: dataDir };
    delete env['DATABASE_URL'];
    const migrate = () =>
      run(process.execPath, [CLI, 'migrate'], { env }).then(
        ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
    const lockFile = join(dataDir, 'pgdata.lock');
    try {
      // The lock of a process of another boot, whose pid is now this live test process's (a power cut, a reboot)
      await writeFile(lockFile, `${process.pid} another-boot/1`);
      expect((await migrate()).code).toBe(0);
      expect(existsSync(lockFile)).toBe(false);
      // The lock of a live holder: this process, as it is
      await writeFile(lockFile, `${process.pid} ${processIdentity(process.pid)}`);
      const refused = await migrate();
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`is open in process ${process.pid}`);
      expect(refused.stderr).toContain(`${lockFile} was left behind: delete it.`);
      // The lock of another container on the same volume (another host name): its pid 4242 is not one this process
      // can look up (another pid namespace), dead here or not, so it is refused, not taken over.
      await writeFile(lockFile, `4242 ${processIdentity(process.pid)} errata-server-container`);
      const elsewhere = await migrate();
      expect(elsewhere.code).toBe(2);
      expect(elsewhere.stderr).toContain(
        'held by process 4242 on host errata-server-container (another container?)',
      );
      expect(existsSync(lockFile)).toBe(true);
      // Unmarked for longer than LOCK_STALE_MS (a killed container, its volume given to a new one): left behind.
      const stale = new Date(Date.now() - LOCK_STALE_MS - 1_000);
      await utimes(lockFile, stale, stale);
      expect((await migrate()).code).toBe(0);
      expect(existsSync(lockFile)).toBe(false);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('marks its lock as held while it holds it, so that another host does not take it for left behind', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'errata-lock-mark-'));
    const lockFile = `${dataDir}.lock`;
    const release = lockEmbeddedStore(dataDir, 20);
    try {
      const stale = new Date(Date.now() - LOCK_STALE_MS - 1_000);
      await utimes(lockFile, stale, stale);
      await until(
        'the lock marked held again',
        async () => Date.now() - (await stat(lockFile)).mtimeMs < 1_000,
        5_000,
      );
    } finally {
      release();
      await rm(dataDir, { recursive: true, force: true });
    }
    expect(existsSync(lockFile)).toBe(false);
  });

  it('a damaged store is said in one line by the server and the CLI, and neither writes to it', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'errata-damaged-pglite-'));
    // A PG_VERSION PGlite cannot start from, the one file it reads first.
    await mkdir(join(dataDir, 'pgdata'));
    await writeFile(join(dataDir, 'pgdata', 'PG_VERSION'), '99\n');
    const env = { ...process.env, ERRATA_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' };
    delete env['DATABASE_URL'];
    const failed = (error: { code: number; stdout: string; stderr: string }) => error;
    try {
      for (const [args, prefix] of [
        [[SERVER_ENTRY], 'Errata failed to start: '],
        [[CLI, 'keys', 'list', '--project', 'default'], 'errata: '],
      ] as const) {
        const result = await run(process.execPath, [...args], { env }).then(() => null, failed);
        expect(result?.code).not.toBe(0);
        expect(result?.stderr).toContain(
          `${prefix}cannot open the embedded PGlite in ${join(dataDir, 'pgdata')}: PGlite failed to initialize properly ` +
            '(its files are damaged or not a PGlite store',
        );
        expect(result?.stderr).not.toMatch(/migration|\n\s+at /);
      }
      expect(await readdir(join(dataDir, 'pgdata'))).toEqual(['PG_VERSION']);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
