import { existsSync, readFileSync, statSync } from 'node:fs';
import { posix, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../apps/server/src/config/app-config';

/**
 * docker-compose.yml and the Dockerfile checked against the code they deploy: only real configuration
 * variables, a DATABASE_URL that matches the postgres service, the default port, and a runtime image that keeps
 * the repository layout the server relies on (migrations/ four levels above dist/database, libs/otlp/proto).
 * Static checks only: no Docker engine is needed.
 */

const ROOT = resolve(__dirname, '..');
const DEFAULT_PORT = loadConfig({}).port;

// ---------------------------------------------------------------------------------------------- compose

type Env = Record<string, string | undefined>;

interface ComposeService {
  image?: string;
  build?: unknown;
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: (string | number | { target: number; published?: number | string })[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: string | string[]; disable?: boolean };
  env_file?: string | string[];
  volumes?: (string | { type?: string; source?: string; target: string })[];
}

interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

const compose = parse(readFileSync(resolve(ROOT, 'docker-compose.yml'), 'utf8')) as ComposeFile;

/** Compose's variable interpolation: $$, $NAME, ${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:?err}, ${NAME?err}. */
function interpolate(value: string, env: Env): string {
  return value.replace(
    /\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g,
    (_match, escaped?: string, braced?: string, op?: string, arg = '', bare?: string) => {
      if (escaped) return '$';
      const name = (braced ?? bare)!;
      const set = env[name];
      const missing = op?.startsWith(':') ? !set : set === undefined;
      if (op?.endsWith('?') && missing) throw new Error(`required variable ${name}: ${arg}`);
      if (op?.endsWith('-') && missing) return arg;
      return set ?? '';
    },
  );
}

function environment(service: ComposeService, env: Env = {}): Record<string, string> {
  const raw = service.environment ?? {};
  const entries = Array.isArray(raw)
    ? raw.map((line) => {
        const at = line.indexOf('=');
        return at === -1 ? [line, ''] : [line.slice(0, at), line.slice(at + 1)];
      })
    : Object.entries(raw).map(([key, value]) => [key, value === null ? '' : String(value)]);
  return Object.fromEntries(entries.map(([key, value]) => [key, interpolate(value!, env)]));
}

/** What the file needs to resolve at all: the keys it (rightly) refuses to default. */
const KEYS: Env = { ERRATA_INGEST_KEY: 'ingest-key-from-env', ERRATA_READ_KEY: 'read-key-from-env' };

function healthcheckCommand(service: ComposeService): string {
  const test = service.healthcheck?.test;
  return Array.isArray(test) ? test.join(' ') : (test ?? '');
}

describe('docker-compose.yml', () => {
  const { postgres, errata } = compose.services;

  it('defines the postgres and errata services', () => {
    expect(postgres).toBeDefined();
    expect(errata).toBeDefined();
    expect(postgres!.image).toMatch(/^postgres:\d+/);
    expect(errata!.build).toBeDefined();
  });

  it('gives errata only variables that loadConfig reads', () => {
    const keys = Object.keys(environment(errata!, KEYS));
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(CONFIG_VARIABLES, `${key} is not a configuration variable`).toContain(key);
  });

  it('passes the settings an admin puts in .env to errata (compose reads .env itself only for ${…}), in a form docker-compose 1.29 reads', () => {
    expect(errata!.env_file).toBe('.env');
  });

  it('requires the API keys from the environment instead of shipping default secrets', () => {
    for (const name of ['ERRATA_INGEST_KEY', 'ERRATA_READ_KEY']) {
      expect(environment(errata!, KEYS)[name]).toBe(KEYS[name]);
      expect(() => environment(errata!, { ...KEYS, [name]: undefined })).toThrow(`required variable ${name}`);
    }
  });

  it.each([
    ['defaults', {}],
    ['POSTGRES_PASSWORD set', { POSTGRES_PASSWORD: 'pw-from-env' }],
  ])(
    'points DATABASE_URL at the postgres service with its credentials and database (%s)',
    (_, extra: Env) => {
      const env = { ...KEYS, ...extra };
      const pg = environment(postgres!, env);
      const url = new URL(environment(errata!, env).DATABASE_URL!);
      const user = pg.POSTGRES_USER || 'postgres';
      expect(url.protocol).toMatch(/^postgres(ql)?:$/);
      expect(url.hostname).toBe('postgres');
      expect(url.port || '5432').toBe('5432');
      expect(decodeURIComponent(url.username)).toBe(user);
      expect(pg.POSTGRES_PASSWORD).toBeTruthy();
      expect(decodeURIComponent(url.password)).toBe(pg.POSTGRES_PASSWORD);
      expect(url.pathname).toBe(`/${pg.POSTGRES_DB || user}`);
      if (extra.POSTGRES_PASSWORD) expect(url.password).toBe(extra.POSTGRES_PASSWORD);
    },
  );

  it('health-checks both services and starts errata once postgres is healthy', () => {
    expect(healthcheckCommand(postgres!)).toContain('pg_isready');
    expect(healthcheckCommand(errata!)).toContain(`127.0.0.1:${DEFAULT_PORT}/readyz`);
    expect(postgres!.healthcheck?.disable).not.toBe(true);
    expect(errata!.healthcheck?.disable).not.toBe(true);
    const dependsOn = errata!.depends_on;
    expect(dependsOn && !Array.isArray(dependsOn) ? dependsOn.postgres?.condition : undefined).toBe(
      'service_healthy',
    );
  });

  it("publishes the server's default port", () => {
    const targets = (errata!.ports ?? []).map((port) => {
      if (typeof port === 'object') return { host: Number(port.published), container: Number(port.target) };
      const parts = String(port)
        .replace(/\/(tcp|udp)$/, '')
        .split(':');
      return { host: Number(parts.at(-2)), container: Number(parts.at(-1)) };
    });
    expect(targets).toContainEqual({ host: DEFAULT_PORT, container: DEFAULT_PORT });
  });

  it('pins PORT to the port it publishes and health-checks, whatever .env says (environment wins over env_file)', () => {
    expect(environment(errata!, KEYS).PORT).toBe(String(DEFAULT_PORT));
  });

  it("keeps Postgres's data in the declared named volume", () => {
    const volumeName = 'errata-pgdata';
    expect(Object.keys(compose.volumes ?? {})).toContain(volumeName);
    // postgres:18+ images keep versioned data dirs under /var/lib/postgresql; older ones use …/data.
    const major = Number(/^postgres:(\d+)/.exec(postgres!.image ?? '')?.[1]);
    const dataDir = major >= 18 ? '/var/lib/postgresql' : '/var/lib/postgresql/data';
    const mounts = (postgres!.volumes ?? []).map((volume) =>
      typeof volume === 'string'
        ? { source: volume.split(':')[0], target: volume.split(':')[1] }
        : { source: volume.source, target: volume.target },
    );
    expect(mounts).toContainEqual({ source: volumeName, target: dataDir });
  });
});

// ---------------------------------------------------------------------------------------------- Dockerfile

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

interface Stage {
  readonly name: string | undefined;
  readonly image: string;
  readonly instructions: Instruction[];
}

function parseDockerfile(text: string): Stage[] {
  const lines = text
    .replace(/\\\r?\n/g, ' ') // line continuations
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const instruction = { keyword: keyword.toUpperCase(), args: args.trim() };
    if (instruction.keyword === 'FROM') {
      const [image = '', as, name] = instruction.args.replace(/--platform=\S+\s+/, '').split(/\s+/);
      stages.push({ image, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else if (stages.length > 0) {
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return stages;
}

/** An exec-form (JSON array) argument list, or the shell form's words. */
function argv(args: string): string[] {
  return args.startsWith('[') ? (JSON.parse(args) as string[]) : args.split(/\s+/);
}

interface Copy {
  readonly from: string | undefined;
  readonly sources: string[];
  readonly dest: string;
}

function copies(stage: Stage): Copy[] {
  return stage.instructions
    .filter(({ keyword }) => keyword === 'COPY' || keyword === 'ADD')
    .map(({ args }) => {
      const words = argv(args);
      const flags = words.filter((word) => word.startsWith('--'));
      const paths = words.filter((word) => !word.startsWith('--'));
      const from = flags.find((flag) => flag.startsWith('--from='))?.slice('--from='.length);
      return { from, sources: paths.slice(0, -1), dest: paths.at(-1)! };
    });
}

function workdir(stage: Stage): string {
  return stage.instructions
    .filter(({ keyword }) => keyword === 'WORKDIR')
    .reduce((dir, { args }) => posix.resolve(dir, args), '/');
}

/** A path a build stage produces rather than one taken from the repository. */
const isBuildOutput = (path: string) =>
  path.split('/').some((part) => part === 'dist' || part === 'node_modules');

/** apps/server and the workspaces it depends on, transitively (the image holds those, not the SDK or the demo). */
function serverWorkspaces(): string[] {
  const rootManifest = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as {
    workspaces: string[];
  };
  const byName = new Map(
    rootManifest.workspaces.map((workspace) => {
      const manifest = JSON.parse(readFileSync(resolve(ROOT, workspace, 'package.json'), 'utf8')) as {
        name: string;
        dependencies?: Record<string, string>;
      };
      return [manifest.name, { workspace, dependencies: Object.keys(manifest.dependencies ?? {}) }];
    }),
  );
  const found = new Set<string>();
  const visit = (name: string): void => {
    const entry = byName.get(name);
    if (entry === undefined || found.has(entry.workspace)) return;
    found.add(entry.workspace);
    entry.dependencies.forEach(visit);
  };
  visit('@errata/server');
  return [...found];
}

describe('Dockerfile', () => {
  const stages = parseDockerfile(readFileSync(resolve(ROOT, 'Dockerfile'), 'utf8'));
  const runtime = stages.at(-1)!;
  const runtimeDir = workdir(runtime);
  const keyword = (name: string) =>
    runtime.instructions.filter((instruction) => instruction.keyword === name);

  /** Every runtime COPY as (repository-relative source, where it lands relative to the runtime's WORKDIR). */
  const placements = copies(runtime).flatMap(({ from, sources, dest }) => {
    const stage = from === undefined ? undefined : stages.find((candidate) => candidate.name === from);
    return sources.map((source) => {
      const relative = stage
        ? posix.relative(workdir(stage), posix.resolve(workdir(stage), source))
        : posix.normalize(source);
      const inRepo = resolve(ROOT, relative);
      const isDirectory = isBuildOutput(relative) || (existsSync(inRepo) && statSync(inRepo).isDirectory());
      const target = posix.resolve(runtimeDir, dest);
      const landsAt =
        !isDirectory && (dest.endsWith('/') || sources.length > 1)
          ? posix.join(target, posix.basename(relative))
          : target;
      return { from, stage, source: relative, inRepo, landsAt: posix.relative(runtimeDir, landsAt) };
    });
  });

  it('is a multi-stage build on node:20-bookworm-slim', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage.image).toBe('node:20-bookworm-slim');
  });

  it('runs the server as a non-root user in production mode', () => {
    expect(argv(keyword('CMD').at(-1)?.args ?? '')).toEqual(['node', 'apps/server/dist/main.js']);
    expect(keyword('USER').at(-1)?.args).toMatch(/^(node|\d*[1-9]\d*)(:|$)/);
    expect(
      keyword('ENV')
        .map(({ args }) => args)
        .join(' '),
    ).toMatch(/\bNODE_ENV=production\b/);
  });

  it('sets only configuration variables that loadConfig reads (plus NODE_ENV)', () => {
    const names = keyword('ENV').flatMap(({ args }) =>
      [...args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=/g)].map((m) => m[1]!),
    );
    expect(names).toContain('ERRATA_DATA_DIR');
    for (const name of names) expect([...CONFIG_VARIABLES, 'NODE_ENV']).toContain(name);
  });

  it("exposes and health-checks the server's default port", () => {
    expect(keyword('EXPOSE').flatMap(({ args }) => args.split(/\s+/))).toContain(String(DEFAULT_PORT));
    const healthcheck = keyword('HEALTHCHECK').at(-1)?.args ?? '';
    expect(healthcheck).toContain('/healthz');
    expect(healthcheck).toContain(String(DEFAULT_PORT));
  });

  it('keeps the repository layout: migrations, the otlp protos, package.json and dist of the server and its workspaces', () => {
    const landed = placements.map(({ landsAt }) => landsAt);
    const workspaces = serverWorkspaces();
    for (const path of [
      'package.json',
      'package-lock.json',
      'node_modules',
      'migrations',
      'libs/otlp/proto',
      'apps/dashboard/dist', // served at / (apps/server/src/http/dashboard.ts)
      ...workspaces.flatMap((workspace) => [`${workspace}/package.json`, `${workspace}/dist`]),
    ]) {
      expect(landed, `${path} is not in the runtime image`).toContain(path);
    }
    // …and each lands where it sits in the repository (the server finds migrations/ relative to its own dist).
    for (const { source, landsAt } of placements) expect(landsAt).toBe(source);
  });

  it('copies into the runtime only paths that exist in the repository or are build outputs', () => {
    for (const { from, stage, source, inRepo } of placements) {
      if (from !== undefined) expect(stage, `COPY --from=${from}: no such stage`).toBeDefined();
      if (from !== undefined && isBuildOutput(source)) continue;
      expect(existsSync(inRepo), `${source} does not exist in the repository`).toBe(true);
    }
  });
});
