/**
 * `npm run demo` when it starts its own Errata, and how it ends: kept running until Ctrl-C with working `curl`
 * lines, stopped by a signal in the middle of the episodes (from a terminal, through npm by a process manager, or
 * its terminal closing), its Errata stopping when the demo is killed, and refusing a port where something else
 * answers. The built demo (`npm run build`) on the embedded store.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { seedEmbeddedStore } from './support/embedded-store';
import { freePort } from './support/server-process';

const ROOT = join(__dirname, '..');
const DEMO = join(ROOT, 'apps/demo-agent/dist/main.js');

interface DemoProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** DEMO_DATA_DIR: the store of the Errata it starts. */
  readonly store: string;
  /** The demo's temporary directories are made in here (TMPDIR). */
  readonly tmp: string;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout holds the text. */
  waitFor(text: string | RegExp, ms?: number): Promise<void>;
  exited(): Promise<number | null>;
}

const started: { dirs: string[]; children: ChildProcess[] } = { dirs: [], children: [] };
afterEach(async () => {
  for (const child of started.children) if (child.exitCode === null) child.kill('SIGKILL');
  await Promise.all(started.dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  started.children = [];
  started.dirs = [];
});

/** Runs the demo (`node main.js`, or `npm run demo` without its build step) on a free port of its own. */
async function startDemo(
  how: 'node' | 'npm',
  env: Record<string, string>,
  url?: string,
  /** Its own process group, as a terminal's foreground job: `process.kill(-pid, signal)` is a Ctrl-C there. */
  group = false,
): Promise<DemoProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'errata-demo-test-'));
  started.dirs.push(dir);
  const tmp = join(dir, 'tmp');
  await mkdir(tmp);
  const errataUrl = url ?? `http://127.0.0.1:${await freePort()}`;
  const [command, args] =
    how === 'node' ? [process.execPath, [DEMO]] : ['npm', ['run', 'demo', '--silent', '--ignore-scripts']];
  const {
    ERRATA_INGEST_KEY: _i,
    ERRATA_READ_KEY: _r,
    DATABASE_URL: _d,
    PORT: _p,
    HOST: _h,
    ...inherited
  } = process.env;
  const store = env['DEMO_DATA_DIR'] ?? join(dir, 'store');
  // A new store (unmigrated: the demo's Errata still makes it its own), spared PGlite's initdb
  if (env['DEMO_DATA_DIR'] === undefined) await seedEmbeddedStore(store);
  const child = spawn(command, args, {
    cwd: ROOT,
    env: {
      ...inherited,
      ERRATA_URL: errataUrl,
      DEMO_DATA_DIR: store,
      TMPDIR: tmp,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: group,
  });
  started.children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    url: errataUrl,
    store,
    tmp,
    stdout: () => stdout,
    stderr: () => stderr,
    exited: () => exit,
    async waitFor(text, ms = 90_000) {
      const deadline = Date.now() + ms;
      const seen = () => (typeof text === 'string' ? stdout.includes(text) : text.test(stdout));
      while (!seen()) {
        if (child.exitCode !== null) throw new Error(`the demo exited:\n${stdout}\n${stderr}`);
        if (Date.now() > deadline) throw new Error(`no "${String(text)}" within ${ms} ms:\n${stdout}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
  };
}

/**
 * The episodes under way: the first agent run of episode 1 has ended (episode 1 prints a line for every run). Seconds
 * sooner than the next episode's line, and as much in the middle of them: MCP servers, workspace and Errata all up.
 */
const FIRST_RUN_PLAYED = /naive +order-status-malformed-id/;

const errataAnswers = (url: string): Promise<boolean> =>
  fetch(`${url}/healthz`).then(
    () => true,
    () => false,
  );

/** As npm does: it forwards to its script the SIGINT the terminal sent to the whole process group a moment ago. */
const forwardedByNpm = async (child: ChildProcess): Promise<void> => {
  await new Promise((resolve) => setTimeout(resolve, 30));
  child.kill('SIGINT');
};

describe('npm run demo with an Errata of its own', () => {
  it('keeps it running in a terminal-like run until Ctrl-C; every line it prints works meanwhile', async () => {
    // The zero-setup path whole, PGlite's initdb included: a store directory that does not exist yet (not a copy of
    // the run's template, as the other demos here get)
    const home = await mkdtemp(join(tmpdir(), 'errata-demo-store-'));
    started.dirs.push(home);
    const demo = await startDemo('node', {
      DEMO_EPISODES: '1',
      DEMO_KEEP_SERVER: '1',
      DEMO_DATA_DIR: join(home, 'store'),
    });
    await demo.waitFor('Press Ctrl-C to stop it.');
    const out = demo.stdout();
    expect(out).toContain(`Nothing answers at ${demo.url}: starting Errata`);
    expect(out).toContain('Keys of project "default" in the Errata the demo started:');
    // Its first run: a new store, with no earlier run's keys to replace or events to keep.
    expect(out).toContain("(generated for this run, in the demo's own store; set ERRATA_INGEST_KEY");
    expect(out).toContain("Its store keeps this run's events for later runs: the embedded database in");
    expect(out).not.toContain('earlier run');
    const curls = [...out.matchAll(/curl -s -H "Authorization: Bearer (\S+)" "(\S+)"/g)];
    expect(curls.map(([, , url]) => url)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/\/api\/v1\/reports\/retry-waste\?groupBy=category&from=\d{4}-\d\d-\d\dT/),
        // Every figure printed for this run has its line, kept to the run.
        expect.stringMatching(/\/api\/v1\/reports\/escalations\?agent=contract-aware&from=\d{4}-/),
        expect.stringMatching(/\/api\/v1\/reports\/subagent-coverage\?from=\d{4}-/),
        expect.stringMatching(/\/api\/v1\/servers\?from=\d{4}-/),
        expect.stringMatching(/\/api\/v1\/traces\/[0-9a-f]{32}$/),
      ]),
    );
    for (const [, key, url] of curls) {
      const response = await fetch(url!, { headers: { authorization: `Bearer ${key}` } });
      expect({ url, status: response.status }).toEqual({ url, status: 200 });
    }
    const trace = curls.find(([, , url]) => url!.includes('/traces/'))!;
    const timeline = (await (
      await fetch(trace[2]!, { headers: { authorization: `Bearer ${trace[1]}` } })
    ).json()) as { runs: { agentName: string }[] };
    expect(timeline.runs.map((run) => run.agentName)).toEqual(
      expect.arrayContaining(['research-coordinator', 'kb-researcher', 'web-researcher', 'news-researcher']),
    );

    demo.child.kill('SIGINT');
    await forwardedByNpm(demo.child);
    expect(await demo.exited()).toBe(0);
    expect(demo.stdout()).toContain('Errata stopped.');
    expect(await errataAnswers(demo.url)).toBe(false);

    // A second run on that store, found by PORT alone (as `PORT=… npm start` sets Errata's port): the keys it
    // generates replace the first run's, whose events stay.
    const port = String(await freePort());
    const again = await startDemo('node', {
      DEMO_EPISODES: '1',
      DEMO_KEEP_SERVER: '0',
      DEMO_DATA_DIR: demo.store,
      ERRATA_URL: '',
      PORT: port,
    });
    expect(await again.exited()).toBe(0);
    expect(again.stdout()).toContain(`Nothing answers at http://127.0.0.1:${port}: starting Errata`);
    expect(again.stdout()).toContain(
      "(generated for this run, in the demo's own store, replacing an earlier run's;",
    );
    expect(again.stdout()).toContain("Earlier runs' events stay in its store too: the embedded database in");
  }, 120_000);

  it.each([
    ['Ctrl-C in a terminal', 'node', 'SIGINT', 130],
    ['a process manager stopping `npm run demo`', 'npm', 'SIGTERM', 143],
    ['its terminal closed', 'node', 'SIGHUP', 129],
  ] as const)(
    'interrupted in the middle of the episodes (%s): stops the MCP servers, its workspace and its Errata, exits 128 + the signal number',
    async (_how, how, signal, exitCode) => {
      const demo = await startDemo(how, { DEMO_EPISODES: '1000', DEMO_KEEP_SERVER: '0' });
      await demo.waitFor(FIRST_RUN_PLAYED);
      expect(await readdir(demo.tmp)).toHaveLength(1); // the workspace of server-filesystem and server-memory
      demo.child.kill(signal);
      // Under `npm run demo` a Ctrl-C comes twice; the second, while the demo cleans up, is the same Ctrl-C.
      if (signal === 'SIGINT') await forwardedByNpm(demo.child);
      // As a shell reports the signal (128 + its number), also through npm
      expect(await demo.exited()).toBe(exitCode);
      expect(demo.stdout()).toContain(`${signal}: stopping what the demo started…`);
      expect(demo.stderr()).toContain(
        'Demo interrupted: the MCP servers, its workspace and any Errata it started are stopped.',
      );
      expect(await readdir(demo.tmp)).toEqual([]);
      expect(await errataAnswers(demo.url)).toBe(false);
    },
    120_000,
  );

  it('Ctrl-C in a terminal (the whole process group, MCP servers and its Errata too): no call after it, exit at once', async () => {
    // Through npm, as `npm run demo` in a terminal: npm forwards the terminal's SIGINT to the demo, which so gets it
    // twice, a moment apart. The second is the same Ctrl-C, not a request to quit at once (skipping the cleanup).
    const demo = await startDemo('npm', { DEMO_EPISODES: '1000', DEMO_KEEP_SERVER: '0' }, undefined, true);
    await demo.waitFor(FIRST_RUN_PLAYED);
    const signalled = Date.now();
    process.kill(-demo.child.pid!, 'SIGINT');
    expect(await demo.exited()).toBe(130);
    // Its Errata got the signal too and is gone: no waiting for an export to it to time out (10 s).
    expect(Date.now() - signalled).toBeLessThan(5_000);
    // The MCP servers died with the signal: every call after it would fail with a transport error, recorded in
    // Errata. The run under way may end (its call in flight fails so); no other run starts.
    const after = demo.stdout().slice(demo.stdout().indexOf('SIGINT: stopping what the demo started…'));
    expect(after.match(/^ +naive +(?!episode:)\S+ +\d+ calls?/gm)?.length ?? 0).toBeLessThanOrEqual(1);
    // Counted on the runs' lines: an episode's line repeats its runs' counts when the run under way was its last.
    const runLines = demo
      .stdout()
      .split('\n')
      .filter((line) => !/^ +\S+ +episode: /.test(line));
    const transportErrors = runLines.flatMap((line) =>
      [...line.matchAll(/transport_error (\d+)/g)].map(([, n]) => Number(n)),
    );
    expect(
      transportErrors.reduce((sum, n) => sum + n, 0),
      demo.stdout(),
    ).toBeLessThanOrEqual(1);
    expect(demo.stderr()).toContain(
      'Demo interrupted: the MCP servers, its workspace and any Errata it started are stopped.',
    );
    expect(await readdir(demo.tmp)).toEqual([]);
  }, 120_000);

  it('killed (SIGKILL): the Errata it started stops too, rather than hold the port and store under unknown keys', async () => {
    const demo = await startDemo('node', { DEMO_EPISODES: '1000', DEMO_KEEP_SERVER: '0' });
    await demo.waitFor(FIRST_RUN_PLAYED);
    const pid = Number(/Errata started \(pid (\d+)\)/.exec(demo.stdout())![1]);
    demo.child.kill('SIGKILL');
    await demo.exited();
    // Reparented when the demo died: a zombie until its new parent reaps it, which is exited all the same.
    const running = (): boolean => {
      try {
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    // Gone, not only closed to requests: it closes its store after that (and the test's store goes next).
    const deadline = Date.now() + 15_000;
    while (running() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(running()).toBe(false);
    expect(await errataAnswers(demo.url)).toBe(false);
  }, 120_000);

  it('its output closed (`npm run demo | head`): stops the MCP servers, its workspace and its Errata, exit 141', async () => {
    const demo = await startDemo('node', { DEMO_EPISODES: '1000', DEMO_KEEP_SERVER: '0' });
    await demo.waitFor(FIRST_RUN_PLAYED);
    demo.child.stdout!.destroy(); // the reader went away, as `head` does after its lines
    expect(await demo.exited()).toBe(141);
    expect(demo.stderr()).toContain(
      'Demo interrupted: the MCP servers, its workspace and any Errata it started are stopped.',
    );
    expect(demo.stderr()).not.toContain('EPIPE');
    expect(await readdir(demo.tmp)).toEqual([]);
    expect(await errataAnswers(demo.url)).toBe(false);
  }, 120_000);

  it('Ctrl-C in a terminal while it starts its Errata (which gets it too): interrupted, exit 130, not a failure', async () => {
    const demo = await startDemo('node', { DEMO_EPISODES: '1', DEMO_KEEP_SERVER: '0' }, undefined, true);
    await demo.waitFor('starting Errata');
    process.kill(-demo.child.pid!, 'SIGINT');
    expect(await demo.exited()).toBe(130);
    expect(demo.stderr()).toBe(
      'Demo interrupted: the MCP servers, its workspace and any Errata it started are stopped.\n',
    );
    expect(await errataAnswers(demo.url)).toBe(false);
  }, 120_000);

  it('both outputs closed (`npm run demo 2>&1 | head`): exit 141, no crash writing to the closed standard error', async () => {
    const demo = await startDemo('node', { DEMO_EPISODES: '1000', DEMO_KEEP_SERVER: '0' });
    await demo.waitFor(FIRST_RUN_PLAYED);
    demo.child.stdout!.destroy();
    demo.child.stderr!.destroy();
    expect(await demo.exited()).toBe(141);
    expect(await readdir(demo.tmp)).toEqual([]);
    expect(await errataAnswers(demo.url)).toBe(false);
  }, 120_000);

  it('--help lists its variables; any other argument is refused before anything starts', async () => {
    const run = (args: string[], env: NodeJS.ProcessEnv = process.env) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, [DEMO, ...args], { cwd: ROOT, env }, (error, stdout, stderr) =>
          resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr }),
        );
      });
    // A count written as 1e3 or 0x5 is no whole number as the help says (Number() would read 1000 and 5).
    for (const episodes of ['1e3', '0x5']) {
      const odd = await run([], { ...process.env, DEMO_EPISODES: episodes });
      expect(odd.code, episodes).toBe(1);
      expect(odd.stderr, episodes).toContain(`DEMO_EPISODES must be a whole number from 1 to`);
    }
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('DEMO_EPISODES');
    expect(help.stdout).not.toContain('Episode 1/');
    const refused = await run(['--episodes=3']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Demo failed: the demo takes no arguments (got --episodes=3)');
    expect(refused.stdout).toBe('');
  });

  it('refuses a port where something other than Errata answers, and says so', async () => {
    const other = createServer((_req, res) => res.writeHead(404).end('not here'));
    other.listen(0, '127.0.0.1');
    await once(other, 'listening');
    const { port } = other.address() as { port: number };
    try {
      const demo = await startDemo('node', { DEMO_EPISODES: '1' }, `http://127.0.0.1:${port}`);
      expect(await demo.exited()).toBe(1);
      expect(demo.stderr()).toBe(
        `Demo failed: something that is not Errata answers at http://127.0.0.1:${port} (GET /healthz → 404); ` +
          "set ERRATA_URL to Errata's URL, or to a free port for the demo to start its own Errata\n",
      );
    } finally {
      other.close();
    }
  }, 60_000);
});
