#!/usr/bin/env node
// Errata ingest throughput benchmark: OTLP/HTTP protobuf → POST /v1/traces → Postgres, end to end, against
// the COPY ceiling of the same rows into the same table on the same Postgres. See BENCHMARKS.md.
//
//   npm run bench:ingest                        (builds first; or: node bench/ingest.bench.mjs after a build)
//
// Environment (all optional):
//   BENCH_DATABASE_URL / DATABASE_URL  base Postgres URL; databases errata_bench_<random> are created and dropped
//                                      on it (default postgres://postgres@127.0.0.1:5432/postgres)
//   BENCH_REQUESTS=200                 timed requests per ingest run
//   BENCH_SPANS_PER_REQUEST=512        tool-call spans per request (the SDK BatchSpanProcessor's default batch)
//   BENCH_CONCURRENCY=8                requests in flight
//   BENCH_RUNS=5                       ingest runs (each: fresh database, fresh server)
//   BENCH_COPY_RUNS=<BENCH_RUNS>       COPY-ceiling runs (0 = skip the COPY ceiling)
//   BENCH_WARMUP_REQUESTS=8            untimed requests per run before the timed ones (JIT, pool); own span ids
//   BENCH_SERVER_NODE_OPTIONS=""       extra node flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
//   BENCH_JSON=<path>                  also write the results as JSON
// Every other ERRATA_* variable in the environment is passed to the server as is (e.g. ERRATA_PG_POOL_SIZE,
// ERRATA_MAX_CONCURRENT_INGESTS); the COPY rows are built with the same text/attribute limits the server uses.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const pg = require('pg');
const { from: copyFrom } = require('pg-copy-streams');
const { encodeTraceRequestProtobuf, decodeTraceRequest } = require(join(ROOT, 'libs/otlp/dist/index.js'));
const { normalizeSpan } = require(join(ROOT, 'libs/domain/dist/index.js'));
const { timestampFromUnixNano } = require(join(ROOT, 'apps/server/dist/database/timestamps.js'));
const { loadConfig } = require(join(ROOT, 'apps/server/dist/config/app-config.js'));

const SERVER_ENTRY = join(ROOT, 'apps/server/dist/main.js');
const SERVER_EXIT_HOOK = join(ROOT, 'bench/server-exit-hook.cjs');
const MIGRATIONS_DIR = join(ROOT, 'migrations');

// ------------------------------------------------------------------------------------------------ settings

function intEnv(name, fallback, min, max) {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

const BASE_URL =
  process.env.BENCH_DATABASE_URL?.trim() ||
  process.env.DATABASE_URL?.trim() ||
  'postgres://postgres@127.0.0.1:5432/postgres';
const REQUESTS = intEnv('BENCH_REQUESTS', 200, 1, 100_000);
const SPANS_PER_REQUEST = intEnv('BENCH_SPANS_PER_REQUEST', 512, 1, 100_000);
const CONCURRENCY = intEnv('BENCH_CONCURRENCY', 8, 1, 1024);
const RUNS = intEnv('BENCH_RUNS', 5, 1, 100);
const COPY_RUNS = intEnv('BENCH_COPY_RUNS', RUNS, 0, 100);
const WARMUP_REQUESTS = intEnv('BENCH_WARMUP_REQUESTS', 8, 0, 10_000);
const SERVER_NODE_OPTIONS = (process.env.BENCH_SERVER_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
const JSON_OUT = process.env.BENCH_JSON?.trim() || null;

const INGEST_KEY = `bench-ingest-${randomBytes(16).toString('hex')}`;
const READY_TIMEOUT_MS = 60_000;
const REQUEST_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 20_000;
const PROJECTION_TIMEOUT_MS = 120_000;
const COPY_CHUNK_BYTES = 1 << 20;
const LOG_TAIL_BYTES = 16_384;

/** The server's own configuration for the environment it will get: same text/attribute limits for the COPY rows. */
function serverEnv(databaseUrl, port) {
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // flags go through BENCH_SERVER_NODE_OPTIONS, explicitly
  delete env.ERRATA_READ_KEY;
  return {
    ...env,
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    ERRATA_INGEST_KEY: INGEST_KEY,
    NODE_ENV: env.NODE_ENV ?? 'production',
  };
}
const SERVER_CONFIG = loadConfig(serverEnv('postgres://unused', 0), ROOT);

// ------------------------------------------------------------------------------------------------ cleanup

const liveServers = new Set();
const benchDatabases = new Set();
let cleaningUp = null;

function cleanup() {
  cleaningUp ??= (async () => {
    for (const server of liveServers) await stopServer(server).catch(() => {});
    for (const name of benchDatabases) await dropDatabase(name).catch(() => {});
  })();
  return cleaningUp;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping servers and dropping bench databases…`);
    const force = setTimeout(() => process.exit(130), 30_000);
    force.unref();
    void cleanup().finally(() => process.exit(130));
  });
}

// ------------------------------------------------------------------------------------------------ postgres

function urlFor(database) {
  const url = new URL(BASE_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

async function withClient(database, fn) {
  const client = new pg.Client({ connectionString: database ? urlFor(database) : BASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function createDatabase() {
  const name = `errata_bench_${randomBytes(6).toString('hex')}`;
  await withClient(null, (c) => c.query(`CREATE DATABASE "${name}"`));
  benchDatabases.add(name);
  return name;
}

async function dropDatabase(name) {
  await withClient(null, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  benchDatabases.delete(name);
}

/** Flushes dirty buffers before a timed phase, so one run's checkpoint does not land in the next one. */
async function checkpoint() {
  await withClient(null, (c) => c.query('CHECKPOINT'));
}

/** The same files the server's migrator applies, in the same (name) order, each in its own transaction. */
async function migrate(database) {
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

async function fingerprint(database) {
  const { rows } = await withClient(database, (c) => c.query(FINGERPRINT_SQL));
  return { rows: Number(rows[0].n), checksum: rows[0].checksum };
}

async function countToolCalls(database) {
  const { rows } = await withClient(database, (c) => c.query('SELECT count(*)::bigint AS n FROM tool_call'));
  return Number(rows[0].n);
}

/** Seconds until tool_call holds `expected` rows, or null after PROJECTION_TIMEOUT_MS. */
async function waitForProjection(database, expected) {
  const started = performance.now();
  for (;;) {
    if ((await countToolCalls(database)) >= expected) return (performance.now() - started) / 1000;
    if (performance.now() - started > PROJECTION_TIMEOUT_MS) return null;
    await sleep(100);
  }
}

async function countEvents(database) {
  const { rows } = await withClient(database, (c) => c.query('SELECT count(*)::bigint AS n FROM event'));
  return Number(rows[0].n);
}

// ------------------------------------------------------------------------------------------------ /proc

const CLK_TCK = 100;

/** utime, stime, cutime, cstime of a process in seconds, or null if it is gone. */
function procCpu(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = (i) => Number(fields[i]);
    return { own: (ticks(11) + ticks(12)) / CLK_TCK, children: (ticks(13) + ticks(14)) / CLK_TCK };
  } catch {
    return null;
  }
}

/** pid → CPU seconds (own + reaped children) of every `postgres` process: backends, walwriter, checkpointer… */
function postgresCpu() {
  const out = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    const cpu = procCpu(entry);
    if (cpu) out.set(entry, cpu.own + cpu.children);
  }
  return out;
}

/**
 * CPU seconds since `before` of the Postgres processes serving this benchmark: backends connected to `database`
 * (server pool, projector, autovacuum) and the shared background processes (walwriter, checkpointer, …); other
 * databases' backends (someone else's tests) are left out.
 */
async function postgresCpuSince(before, database) {
  const { rows } = await withClient(null, (c) =>
    c.query(
      `SELECT pid FROM pg_stat_activity WHERE (datname = $1 OR backend_type <> 'client backend') AND pid <> pg_backend_pid()`,
      [database],
    ),
  );
  const ours = new Set(rows.map((row) => String(row.pid)));
  ours.add(postmasterPid());
  let total = 0;
  for (const [pid, seconds] of postgresCpu()) if (ours.has(pid)) total += seconds - (before.get(pid) ?? 0);
  return total;
}

function postmasterPid() {
  let pid = null;
  for (const [candidate] of postgresCpu()) {
    try {
      const stat = readFileSync(`/proc/${candidate}/stat`, 'utf8');
      const ppid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
      if (readFileSync(`/proc/${ppid}/comm`, 'utf8').trim() !== 'postgres') pid = candidate;
    } catch {
      // gone
    }
  }
  return pid;
}

/** Busy CPU seconds of the whole machine (all cores), from /proc/stat. */
function machineBusyCpu() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = fields;
  return (user + nice + system + irq + softirq + (steal ?? 0)) / CLK_TCK;
}

function procStatusMb(pid, field) {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(
      readFileSync(`/proc/${pid}/status`, 'utf8'),
    );
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

// ------------------------------------------------------------------------------------------------ data

const SERVERS = [
  {
    name: 'github',
    version: '0.9.1',
    address: 'api.githubcopilot.com',
    port: 443,
    transport: 'tcp',
    tools: ['search_issues', 'get_pull_request', 'create_issue', 'list_commits', 'get_file_contents'],
    weight: 4,
  },
  {
    name: 'filesystem',
    version: '2025.7.1',
    address: '127.0.0.1',
    port: 8811,
    transport: 'tcp',
    tools: ['read_file', 'write_file', 'list_directory', 'search_files'],
    weight: 4,
  },
  {
    name: 'postgres-mcp',
    version: '0.3.0',
    address: 'db-tools.internal',
    port: 8080,
    transport: 'tcp',
    tools: ['query', 'list_tables', 'describe_table'],
    weight: 2,
  },
  {
    name: 'slack',
    version: '1.2.0',
    address: 'mcp.slack.com',
    port: 443,
    transport: 'tcp',
    tools: ['post_message', 'search_messages', 'list_channels'],
    weight: 1,
  },
  {
    name: 'brave-search',
    version: '0.6.2',
    address: 'localhost',
    port: 8931,
    transport: 'tcp',
    tools: ['web_search', 'local_search'],
    weight: 1,
  },
];
const WEIGHTED_SERVERS = SERVERS.flatMap((server) => Array(server.weight).fill(server));

// Small deterministic PRNG (mulberry32): the same data every invocation.
let seed = 0x5eed_e77a;
function random() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (items) => items[Math.floor(random() * items.length)];
const int = (min, max) => min + Math.floor(random() * (max - min + 1));
const hex = (bytes) => {
  let out = '';
  for (let i = 0; i < bytes; i++)
    out += Math.floor(random() * 256)
      .toString(16)
      .padStart(2, '0');
  return out;
};

const REPOS = ['acme/web-app', 'acme/billing-service', 'errata-dev/errata', 'octo-org/infra', 'acme/mobile'];
const FILES = [
  'src/index.ts',
  'src/routes/orders.ts',
  'README.md',
  'package.json',
  'lib/payments/refund.py',
  'docs/setup.md',
];
const TABLES = ['orders', 'customers', 'invoice_lines', 'subscriptions', 'audit_log'];

/** Tool error result texts (~150–250 chars) as MCP servers return them, with the category a server might declare. */
const ERRORS = [
  {
    servers: ['github'],
    category: 'rate_limited',
    retryable: true,
    text: () =>
      `GitHub API error 403: API rate limit exceeded for installation ID ${int(1e7, 9e7)}. Limit 5000 requests/hour, resets at ${new Date(Date.now() + int(60, 3600) * 1000).toISOString()}. See https://docs.github.com/rest/overview/rate-limits-for-the-rest-api`,
  },
  {
    servers: ['github'],
    category: 'not_found',
    retryable: false,
    text: () => {
      const repo = pick(REPOS);
      return `Not Found: repository "${repo}" does not exist or the token lacks access (GET /repos/${repo}/issues?state=open&per_page=50 returned 404). Check the owner and repository name, and that the token has the repo scope.`;
    },
  },
  {
    servers: ['filesystem'],
    category: 'validation',
    retryable: false,
    text: () =>
      `Error: ENOENT: no such file or directory, open '/home/dev/projects/${pick(REPOS).split('/')[1]}/${pick(FILES)}'. Allowed directories: /home/dev/projects, /tmp/agent-workspace. Use list_directory to find the file first.`,
  },
  {
    servers: ['filesystem'],
    category: 'permission',
    retryable: false,
    text: () =>
      `Error: Access denied - path outside allowed directories: /etc/${pick(['ssh/sshd_config', 'passwd', 'hosts', 'nginx/nginx.conf'])} not in /home/dev/projects, /tmp/agent-workspace. The server only reads and writes inside its allowed roots.`,
  },
  {
    servers: ['postgres-mcp'],
    category: 'validation',
    retryable: false,
    text: () =>
      JSON.stringify({
        error: {
          code: '42P01',
          message: `relation "${pick(TABLES)}_v${int(1, 3)}" does not exist`,
          position: int(10, 300),
          hint: 'Use list_tables to see the tables of schema public.',
          category: 'validation',
        },
      }),
  },
  {
    servers: ['postgres-mcp'],
    category: 'timeout',
    retryable: true,
    text: () =>
      `canceling statement due to statement timeout (30000 ms) while executing: SELECT o.id, o.total_cents, c.email FROM ${pick(TABLES)} o JOIN customers c ON c.id = o.customer_id WHERE o.created_at > now() - interval '${int(2, 90)} days'`,
  },
  {
    servers: ['slack'],
    category: 'rate_limited',
    retryable: true,
    text: () =>
      JSON.stringify({
        ok: false,
        error: 'ratelimited',
        retry_after: int(1, 60),
        response_metadata: {
          messages: ['[ERROR] too many requests to chat.postMessage for this workspace, retry later'],
        },
      }),
  },
  {
    servers: ['slack'],
    category: 'not_found',
    retryable: false,
    text: () =>
      `Slack API error channel_not_found: the channel C0${hex(4).toUpperCase()} does not exist, is archived, or the bot user is not a member. Invite the bot with /invite @errata-agent and retry the post_message call.`,
  },
  {
    servers: ['brave-search'],
    category: 'rate_limited',
    retryable: true,
    text: () =>
      `Brave Search API error: 429 Too Many Requests - {"type":"ErrorResponse","error":{"id":"${hex(8)}","status":429,"code":"RATE_LIMITED","detail":"Request rate limit exceeded for plan Free (1 req/s)."}}`,
  },
  {
    servers: ['github', 'filesystem', 'postgres-mcp', 'slack', 'brave-search'],
    category: 'invalid_argument',
    retryable: false,
    text: () =>
      `MCP error -32602: Invalid arguments for tool: [{"code":"invalid_type","expected":"string","received":"undefined","path":["${pick(['query', 'path', 'channel', 'owner'])}"],"message":"Required"},{"code":"too_small","minimum":1,"path":["limit"]}]`,
  },
];

const SDK_RESOURCE = [
  ['service.name', 'support-agent'],
  ['service.version', '3.14.2'],
  ['service.instance.id', '6f1c2a9e-52b4-4c1e-9d3a-7b0f2e8c4d11'],
  ['deployment.environment.name', 'production'],
  ['telemetry.sdk.name', 'opentelemetry'],
  ['telemetry.sdk.language', 'nodejs'],
  ['telemetry.sdk.version', '2.12.1'],
  ['host.name', 'agent-worker-7'],
  ['process.pid', 48213],
  ['process.runtime.name', 'nodejs'],
  ['process.runtime.version', '20.19.4'],
];

function attribute(key, value) {
  if (typeof value === 'string') return { key, value: { stringValue: value } };
  if (typeof value === 'boolean') return { key, value: { boolValue: value } };
  if (Number.isInteger(value)) return { key, value: { intValue: value } };
  return { key, value: { doubleValue: value } };
}

let idCounter = 0;
/** Unique across the whole invocation: random bytes, then a counter. Warm-up trace ids start with byte 00. */
function newTraceId(warmup) {
  const first = warmup ? '00' : int(1, 255).toString(16).padStart(2, '0');
  return first + hex(7) + (++idCounter).toString(16).padStart(16, '0');
}
const newSpanId = () => hex(4) + (++idCounter).toString(16).padStart(8, '0');

const CALLS_PER_TRACE = 8;

/** One tool call span as the Errata MCP client instrumentation exports it (CLIENT, `tools/call <tool>`). */
function toolCallSpan(trace, startMs) {
  const server = trace.server;
  const tool = pick(server.tools);
  const isError = random() < 0.15;
  const itemCount = isError ? 0 : random() < 0.06 ? 0 : int(1, 50);
  const durationNs = BigInt(int(3, isError ? 30_000 : 2_500)) * 1_000_000n + BigInt(int(0, 999_999));
  const start = BigInt(startMs) * 1_000_000n + BigInt(int(0, 999_999));
  const attributes = [
    attribute('mcp.method.name', 'tools/call'),
    attribute('gen_ai.operation.name', 'execute_tool'),
    attribute('gen_ai.tool.name', tool),
    attribute('jsonrpc.request.id', String(trace.nextRequestId++)),
    attribute('mcp.session.id', trace.sessionId),
    attribute('mcp.protocol.version', '2025-06-18'),
    attribute('network.transport', server.transport),
    attribute('server.address', server.address),
    attribute('server.port', server.port),
    attribute('errata.server.name', server.name),
    attribute('errata.server.version', server.version),
    attribute('errata.result.is_error', isError),
    attribute('errata.result.empty', !isError && itemCount === 0),
    attribute('errata.result.item_count', itemCount),
    attribute('errata.args.hash', hex(16)),
    attribute('errata.args.size', int(20, 2_000)),
  ];
  if (isError) {
    const candidates = ERRORS.filter((error) => error.servers.includes(server.name));
    const error = pick(candidates);
    attributes.push(attribute('error.type', 'tool_error'), attribute('errata.result.text', error.text()));
    if (random() < 0.4) {
      attributes.push(attribute('errata.error.category', error.category));
      attributes.push(attribute('errata.error.retryable', error.retryable));
    }
  }
  return {
    traceId: trace.traceId,
    spanId: newSpanId(),
    parentSpanId: trace.agentSpanId,
    name: `tools/call ${tool}`,
    kind: 3,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: (start + durationNs).toString(),
    attributes,
    status: isError ? { code: 2 } : { code: 0 },
  };
}

function newTrace(warmup, startMs) {
  return {
    traceId: newTraceId(warmup),
    agentSpanId: newSpanId(), // the invoke_agent span, exported in another batch
    sessionId: `${hex(4)}-${hex(2)}-4${hex(2).slice(1)}-8${hex(2).slice(1)}-${hex(6)}`,
    server: pick(WEIGHTED_SERVERS),
    nextRequestId: int(1, 20),
    calls: 0,
    clockMs: startMs,
  };
}

/** `count` protobuf request bodies of SPANS_PER_REQUEST spans each. */
function generateBodies(count, warmup) {
  const bodies = [];
  let clockMs = Date.now() - 3_600_000;
  let trace = newTrace(warmup, clockMs);
  for (let r = 0; r < count; r++) {
    const spans = [];
    for (let s = 0; s < SPANS_PER_REQUEST; s++) {
      if (trace.calls === CALLS_PER_TRACE) trace = newTrace(warmup, (clockMs += int(0, 50)));
      trace.clockMs += int(50, 4_000);
      spans.push(toolCallSpan(trace, trace.clockMs));
      trace.calls++;
    }
    const request = {
      resourceSpans: [
        {
          resource: { attributes: SDK_RESOURCE.map(([key, value]) => attribute(key, value)) },
          scopeSpans: [
            {
              scope: { name: '@errata/mcp-instrumentation', version: '0.4.0' },
              spans,
              schemaUrl: 'https://opentelemetry.io/schemas/1.34.0',
            },
          ],
          schemaUrl: 'https://opentelemetry.io/schemas/1.34.0',
        },
      ],
    };
    bodies.push(encodeTraceRequestProtobuf(request));
  }
  return bodies;
}

// ------------------------------------------------------------------------------------------------ COPY rows

/** COPY text format: backslash, newline, carriage return and tab escaped; `\N` is NULL. */
function copyText(value) {
  if (value === null || value === undefined) return '\\N';
  return String(value).replace(/[\\\n\r\t]/g, (c) =>
    c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t',
  );
}
const copyBytea = (hexId) => (hexId === null ? '\\N' : `\\\\x${hexId}`);

/**
 * The rows the server appends for these bodies, through the same code path: decodeTraceRequest → normalizeSpan →
 * the fields IngestService.toNewEvent derives (times via the server's timestampFromUnixNano), as COPY text lines
 * without the leading project_id column.
 */
function eventLines(bodies) {
  const lines = [];
  for (const body of bodies) {
    const decoded = decodeTraceRequest(body, 'protobuf', {
      maxAttributeValueBytes: SERVER_CONFIG.maxAttributeBytes,
    });
    if (decoded.rejected.length > 0)
      throw new Error(`generated body has rejected spans: ${decoded.rejected[0].reason}`);
    for (const span of decoded.spans) {
      const event = normalizeSpan(span, { textLimitBytes: SERVER_CONFIG.textLimitBytes });
      if (!event) throw new Error(`generated span ${span.spanId} is not an event`);
      const toolCall = event.type === 'ToolCallObserved' ? event.data : null;
      lines.push(
        [
          copyBytea(span.traceId),
          copyBytea(span.spanId),
          copyText(timestampFromUnixNano(span.startTimeUnixNano)),
          copyText(timestampFromUnixNano(span.endTimeUnixNano)),
          copyBytea(span.parentSpanId),
          copyText(event.type),
          copyText(toolCall?.server.name ?? null),
          copyText(toolCall?.tool ?? null),
          copyText(toolCall?.outcome ?? null),
          copyText(JSON.stringify(event.data)),
        ].join('\t'),
      );
    }
  }
  return lines;
}

/** The COPY payload in ~1 MiB chunks. */
function copyChunks(projectId, lines) {
  const chunks = [];
  let parts = [];
  let size = 0;
  for (const line of lines) {
    const row = `${projectId}\t${line}\n`;
    parts.push(row);
    size += row.length;
    if (size >= COPY_CHUNK_BYTES) {
      chunks.push(Buffer.from(parts.join(''), 'utf8'));
      parts = [];
      size = 0;
    }
  }
  if (parts.length > 0) chunks.push(Buffer.from(parts.join(''), 'utf8'));
  return chunks;
}

const COPY_SQL =
  'COPY event (project_id, trace_id, span_id, start_time, end_time, parent_span_id, type, server_name, tool_name, outcome, data) FROM STDIN';

// ------------------------------------------------------------------------------------------------ server

function freePort() {
  return new Promise((resolvePort, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolvePort(port));
    });
  });
}

function httpGet(port, path) {
  return new Promise((resolveGet, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, timeout: 5_000, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolveGet(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

async function startServer(database) {
  const port = await freePort();
  const args = [
    ...SERVER_NODE_OPTIONS,
    ...(SERVER_NODE_OPTIONS.length > 0 ? ['--require', SERVER_EXIT_HOOK] : []),
    SERVER_ENTRY,
  ];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: serverEnv(urlFor(database), port),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const server = { child, port, pid: child.pid, log: '', exit: null };
  const keep = (chunk) => {
    server.log = (server.log + chunk.toString('utf8')).slice(-LOG_TAIL_BYTES);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  server.exited = new Promise((resolveExit) =>
    child.once('exit', (code, signal) => {
      server.exit = { code, signal };
      liveServers.delete(server);
      resolveExit(server.exit);
    }),
  );
  liveServers.add(server);
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (server.exit) throw new ServerError(server, 'server exited before it was ready');
    const status = await httpGet(port, '/readyz').catch(() => null);
    if (status === 200) return server;
    if (Date.now() > deadline)
      throw new ServerError(server, `GET /readyz not 200 after ${READY_TIMEOUT_MS} ms`);
    await sleep(100);
  }
}

async function stopServer(server) {
  if (server.exit) return server.exit;
  server.child.kill('SIGTERM');
  const timeout = sleep(STOP_TIMEOUT_MS).then(() => null);
  const exit = await Promise.race([server.exited, timeout]);
  if (exit) return exit;
  console.error(`  server ${server.pid} ignored SIGTERM for ${STOP_TIMEOUT_MS} ms: SIGKILL`);
  server.child.kill('SIGKILL');
  return server.exited;
}

class ServerError extends Error {
  constructor(server, message) {
    const exit = server.exit ? ` (exit code ${server.exit.code}, signal ${server.exit.signal})` : '';
    super(`${message}${exit}; last server output:\n${server.log.trim() || '(none)'}`);
  }
}

// ------------------------------------------------------------------------------------------------ client

/**
 * POSTs every body with `concurrency` requests in flight over keep-alive connections (node:http, lower overhead
 * than fetch/undici here). Returns acknowledged spans, non-200 answers and per-request latencies.
 */
async function sendAll(port, bodies, concurrency) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
  const headers = { 'content-type': 'application/x-protobuf', authorization: `Bearer ${INGEST_KEY}` };
  const latencies = [];
  const failures = new Map();
  let ackedRequests = 0;
  let partial = 0;
  let next = 0;
  const post = (body) =>
    new Promise((resolvePost, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/traces',
          agent,
          timeout: REQUEST_TIMEOUT_MS,
          headers: { ...headers, 'content-length': body.length },
        },
        (res) => {
          const chunks = [];
          res.on('data', (chunk) => chunks.push(chunk));
          res.on('end', () => resolvePost({ status: res.statusCode, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  const worker = async () => {
    while (next < bodies.length) {
      const body = bodies[next++];
      const began = performance.now();
      let answer;
      try {
        answer = await post(body);
      } catch (error) {
        answer = { status: `error: ${error.code ?? error.message}`, body: Buffer.alloc(0) };
      }
      latencies.push(performance.now() - began);
      if (answer.status === 200) {
        ackedRequests++;
        if (answer.body.length > 0) partial++; // an ExportTraceServiceResponse with partial_success
      } else {
        const entry = failures.get(answer.status) ?? {
          count: 0,
          sample: answer.body.toString('utf8').slice(0, 300),
        };
        entry.count++;
        failures.set(answer.status, entry);
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, bodies.length) }, worker));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return {
    ackedRequests,
    ackedSpans: ackedRequests * SPANS_PER_REQUEST,
    partial,
    failures,
    latencies,
    seconds,
  };
}

// ------------------------------------------------------------------------------------------------ phases

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const fmt = (n, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

const problems = [];

/**
 * Spans/s if server, Postgres and client had both cores to themselves, from CPU cost alone (ignores I/O waits):
 * all of it shares 2 cores, and the server's JavaScript runs on one thread, so whichever saturates first.
 */
function cpuBoundEstimate(runs) {
  const spans = REQUESTS * SPANS_PER_REQUEST;
  const all = median(runs.map((r) => r.cpuSeconds.server + r.cpuSeconds.postgres + r.cpuSeconds.client));
  const mainThread = median(runs.map((r) => r.cpuSeconds.serverMainThread));
  return Math.min(spans / (all / 2), spans / mainThread);
}

async function ingestRun(index, bodies, warmupBodies) {
  const database = await createDatabase();
  let server;
  try {
    server = await startServer(database);
    const warmup = warmupBodies.length > 0 ? await sendAll(server.port, warmupBodies, CONCURRENCY) : null;
    if (server.exit) throw new ServerError(server, 'server died during warm-up');
    await checkpoint();

    const pgBefore = postgresCpu();
    const serverBefore = procCpu(server.pid);
    const mainThreadBefore = procCpu(`${server.pid}/task/${server.pid}`);
    const machineBefore = machineBusyCpu();
    const clientBefore = process.cpuUsage();
    const result = await sendAll(server.port, bodies, CONCURRENCY);
    const clientCpu = process.cpuUsage(clientBefore);
    const serverAfter = procCpu(server.pid);
    const mainThreadAfter = procCpu(`${server.pid}/task/${server.pid}`);
    const machineCpu = machineBusyCpu() - machineBefore;
    const pgCpu = await postgresCpuSince(pgBefore, database);
    const serverCpu = serverAfter.own - serverBefore.own;
    const mainThreadCpu = mainThreadAfter.own - mainThreadBefore.own;
    const clientCpuSeconds = (clientCpu.user + clientCpu.system) / 1e6;
    const otherCpu = Math.max(0, machineCpu - serverCpu - pgCpu - clientCpuSeconds);
    if (server.exit) throw new ServerError(server, `server died during run ${index}`);

    const stored = await countEvents(database);
    const expected = result.ackedSpans + (warmup?.ackedSpans ?? 0);
    // The projector (tool_call read model) runs in the same process; how far behind it is when the last request
    // is acknowledged, and how long it then takes to catch up, shows whether ingest borrowed CPU from it.
    const projectedAtEnd = await countToolCalls(database);
    const catchUpSeconds = await waitForProjection(database, stored);
    const peakRssMb = procStatusMb(server.pid, 'VmHWM');
    if (server.exit) throw new ServerError(server, `server died after run ${index}`);
    const measured = await fingerprint(database);
    const projectRows = await withClient(database, (c) =>
      c.query(`SELECT id FROM project WHERE name = 'default'`),
    );

    const spansPerSecond = result.ackedSpans / result.seconds;
    const failed = [...result.failures].map(([status, { count, sample }]) => `${count}× ${status} ${sample}`);
    const line =
      `ingest run ${index}/${RUNS}: ${fmt(result.ackedSpans)} spans acked in ${fmt(result.seconds, 2)} s = ` +
      `${fmt(spansPerSecond)} spans/s · latency p50 ${fmt(percentile(result.latencies, 50))} ms, ` +
      `p99 ${fmt(percentile(result.latencies, 99))} ms · server peak RSS ${fmt(peakRssMb ?? NaN, 1)} MB · ` +
      `CPU s: server ${fmt(serverCpu, 1)} (main thread ${fmt(mainThreadCpu, 1)}), postgres ${fmt(pgCpu, 1)}, bench client ${fmt(clientCpuSeconds, 1)}, ` +
      `other processes ${fmt(otherCpu, 1)} · rows ${fmt(stored)} · projector backlog ${fmt(stored - projectedAtEnd)} ` +
      `events at the last ack, caught up ` +
      (catchUpSeconds === null
        ? `NOT within ${PROJECTION_TIMEOUT_MS / 1000} s`
        : `${fmt(catchUpSeconds, 1)} s later`);
    console.log(line);
    if (failed.length > 0) {
      problems.push(`run ${index}: non-200 answers: ${failed.join('; ')}`);
      console.log(`  !! non-200 answers: ${failed.join('; ')}`);
    }
    if (result.partial > 0) problems.push(`run ${index}: ${result.partial} partial-success answers`);
    if (warmup && warmup.ackedRequests !== warmupBodies.length)
      problems.push(`run ${index}: warm-up requests failed`);
    if (stored !== expected) {
      throw new Error(
        `run ${index}: SELECT count(*) FROM event = ${stored}, but ${expected} spans were acknowledged ` +
          `(${result.ackedSpans} timed + ${warmup?.ackedSpans ?? 0} warm-up)`,
      );
    }
    return {
      spansPerSecond,
      seconds: result.seconds,
      ackedSpans: result.ackedSpans,
      peakRssMb,
      p50Ms: percentile(result.latencies, 50),
      p99Ms: percentile(result.latencies, 99),
      cpuSeconds: {
        server: serverCpu,
        serverMainThread: mainThreadCpu,
        postgres: pgCpu,
        client: clientCpuSeconds,
        other: otherCpu,
      },
      projectorBacklogAtEnd: stored - projectedAtEnd,
      projectorCatchUpSeconds: catchUpSeconds,
      fingerprint: measured,
      projectId: projectRows.rows[0]?.id ?? 1,
    };
  } catch (error) {
    if (server && server.exit && !(error instanceof ServerError))
      throw new ServerError(server, error.message);
    throw error;
  } finally {
    if (server) {
      const exit = await stopServer(server);
      if (exit.code !== 0 && exit.signal !== 'SIGTERM') {
        problems.push(`run ${index}: server exited with code ${exit.code}, signal ${exit.signal} on SIGTERM`);
      }
    }
    await dropDatabase(database);
  }
}

async function copyRun(index, chunks, rowCount, expectedFingerprint) {
  const database = await createDatabase();
  try {
    await migrate(database);
    await checkpoint();
    const client = new pg.Client({ connectionString: urlFor(database) });
    await client.connect();
    let seconds;
    const pgBefore = postgresCpu();
    const machineBefore = machineBusyCpu();
    const clientBefore = process.cpuUsage();
    try {
      const started = performance.now();
      await pipeline(Readable.from(chunks), client.query(copyFrom(COPY_SQL)));
      seconds = (performance.now() - started) / 1000;
    } finally {
      await client.end();
    }
    const clientCpu = process.cpuUsage(clientBefore);
    const machineCpu = machineBusyCpu() - machineBefore;
    const pgCpu = await postgresCpuSince(pgBefore, database);
    const clientCpuSeconds = (clientCpu.user + clientCpu.system) / 1e6;
    const otherCpu = Math.max(0, machineCpu - pgCpu - clientCpuSeconds);
    const stored = await countEvents(database);
    if (stored !== rowCount)
      throw new Error(`COPY run ${index}: ${stored} rows in event, expected ${rowCount}`);
    let same = '';
    if (index === 1 && expectedFingerprint) {
      const copied = await fingerprint(database);
      if (copied.rows !== expectedFingerprint.rows || copied.checksum !== expectedFingerprint.checksum) {
        throw new Error(
          `COPY rows differ from the rows the server wrote: ${JSON.stringify(copied)} vs ${JSON.stringify(expectedFingerprint)}`,
        );
      }
      same = ' · rows identical to the server-written ones (checksum)';
    }
    const rowsPerSecond = rowCount / seconds;
    console.log(
      `COPY run ${index}/${COPY_RUNS}: ${fmt(rowCount)} rows in ${fmt(seconds, 2)} s = ${fmt(rowsPerSecond)} rows/s · ` +
        `CPU s: postgres ${fmt(pgCpu, 1)}, bench client ${fmt(clientCpuSeconds, 1)}, other processes ${fmt(otherCpu, 1)}${same}`,
    );
    return {
      rowsPerSecond,
      seconds,
      cpuSeconds: { postgres: pgCpu, client: clientCpuSeconds, other: otherCpu },
    };
  } finally {
    await dropDatabase(database);
  }
}

// ------------------------------------------------------------------------------------------------ main

async function main() {
  const { rows } = await withClient(null, (c) => c.query('SHOW server_version'));
  const pgVersion = rows[0].server_version;
  console.log(
    `Errata ingest benchmark — node ${process.version}, PostgreSQL ${pgVersion}, ${(await import('node:os')).cpus().length} CPUs\n` +
      `  ${REQUESTS} requests × ${SPANS_PER_REQUEST} spans (+${WARMUP_REQUESTS} warm-up requests per run), ` +
      `concurrency ${CONCURRENCY}, ${RUNS} ingest runs, ${COPY_RUNS} COPY runs; server pool ${SERVER_CONFIG.poolSize}, ` +
      `max concurrent ingests ${SERVER_CONFIG.maxConcurrentIngests}` +
      (SERVER_NODE_OPTIONS.length ? `; server node flags: ${SERVER_NODE_OPTIONS.join(' ')}` : ''),
  );

  const generationStarted = performance.now();
  const bodies = generateBodies(REQUESTS, false);
  const warmupBodies = generateBodies(WARMUP_REQUESTS, true);
  const bodyBytes = bodies.reduce((sum, body) => sum + body.length, 0);
  const lines = COPY_RUNS > 0 ? eventLines(bodies) : [];
  console.log(
    `generated ${fmt(REQUESTS)} bodies (${fmt(bodyBytes / REQUESTS / 1024, 1)} KiB each, ` +
      `${fmt(bodyBytes / (REQUESTS * SPANS_PER_REQUEST))} B/span) in ${fmt((performance.now() - generationStarted) / 1000, 1)} s`,
  );

  const ingest = [];
  for (let run = 1; run <= RUNS; run++) ingest.push(await ingestRun(run, bodies, warmupBodies));

  const copy = [];
  if (COPY_RUNS > 0) {
    const chunks = copyChunks(ingest[0].projectId, lines);
    const copyBytes = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    console.log(
      `COPY payload: ${fmt(lines.length)} rows, ${fmt(copyBytes / 1048576, 1)} MiB text in ${chunks.length} chunks`,
    );
    for (let run = 1; run <= COPY_RUNS; run++)
      copy.push(await copyRun(run, chunks, lines.length, ingest[0].fingerprint));
  }

  const ingestMedian = median(ingest.map((r) => r.spansPerSecond));
  const copyMedian = copy.length ? median(copy.map((r) => r.rowsPerSecond)) : null;
  const rss = ingest.map((r) => r.peakRssMb ?? NaN);
  const ratio = copyMedian ? ingestMedian / copyMedian : null;
  const summary = [
    '',
    '================ Errata ingest benchmark summary ================',
    `data           ${fmt(REQUESTS)} requests × ${SPANS_PER_REQUEST} MCP tool-call spans (${fmt(bodyBytes / REQUESTS / 1024, 1)} KiB protobuf each), concurrency ${CONCURRENCY}`,
    `ingest         median ${fmt(ingestMedian)} spans/s over ${RUNS} runs (min ${fmt(Math.min(...ingest.map((r) => r.spansPerSecond)))}, max ${fmt(Math.max(...ingest.map((r) => r.spansPerSecond)))})`,
    `latency        median p50 ${fmt(median(ingest.map((r) => r.p50Ms)))} ms, median p99 ${fmt(median(ingest.map((r) => r.p99Ms)))} ms per ${SPANS_PER_REQUEST}-span request`,
    copyMedian
      ? `COPY ceiling   median ${fmt(copyMedian)} rows/s over ${COPY_RUNS} runs (one COPY … FROM STDIN, text, 1 MiB writes, same rows/table/indexes)`
      : 'COPY ceiling   skipped (BENCH_COPY_RUNS=0)',
    ratio !== null ? `ratio          ingest / COPY = ${fmt(ratio, 2)}` : null,
    `server RSS     peak (VmHWM) max ${fmt(Math.max(...rss), 1)} MB, median ${fmt(median(rss), 1)} MB`,
    `CPU per run    median s: server ${fmt(median(ingest.map((r) => r.cpuSeconds.server)), 1)} (main thread ${fmt(median(ingest.map((r) => r.cpuSeconds.serverMainThread)), 1)}), postgres ${fmt(median(ingest.map((r) => r.cpuSeconds.postgres)), 1)}, bench client ${fmt(median(ingest.map((r) => r.cpuSeconds.client)), 1)}, other processes ${fmt(median(ingest.map((r) => r.cpuSeconds.other)), 1)} (wall ${fmt(median(ingest.map((r) => r.seconds)), 1)} s)`,
    `CPU cost       server ${fmt((1e6 * median(ingest.map((r) => r.cpuSeconds.server))) / REQUESTS / SPANS_PER_REQUEST)} µs/span ` +
      `(main thread ${fmt((1e6 * median(ingest.map((r) => r.cpuSeconds.serverMainThread))) / REQUESTS / SPANS_PER_REQUEST)}), ` +
      `postgres ${fmt((1e6 * median(ingest.map((r) => r.cpuSeconds.postgres))) / REQUESTS / SPANS_PER_REQUEST)} µs/span ` +
      `→ CPU-bound estimate on 2 otherwise idle cores ≈ ${fmt(cpuBoundEstimate(ingest))} spans/s`,
    `projector      median backlog at the last ack ${fmt(median(ingest.map((r) => r.projectorBacklogAtEnd)))} events, ` +
      `caught up median ${fmt(median(ingest.map((r) => r.projectorCatchUpSeconds ?? Infinity)), 1)} s later → ` +
      `ingested and projected: median ${fmt(median(ingest.map((r) => r.ackedSpans / (r.seconds + (r.projectorCatchUpSeconds ?? Infinity)))))} spans/s`,
    `targets        ≥ 20,000 spans/s: ${ingestMedian >= 20_000 ? 'MET' : 'NOT MET'}` +
      (ratio !== null ? ` · ≥ 0.5 × COPY: ${ratio >= 0.5 ? 'MET' : 'NOT MET'}` : ''),
    problems.length ? `PROBLEMS       ${problems.join('\n               ')}` : null,
    '=================================================================',
  ].filter((line) => line !== null);
  console.log(summary.join('\n'));

  if (JSON_OUT) {
    writeFileSync(
      JSON_OUT,
      JSON.stringify(
        {
          settings: {
            REQUESTS,
            SPANS_PER_REQUEST,
            CONCURRENCY,
            RUNS,
            COPY_RUNS,
            WARMUP_REQUESTS,
            SERVER_NODE_OPTIONS,
          },
          pgVersion,
          node: process.version,
          ingest: ingest.map(({ fingerprint: _, ...rest }) => rest),
          copy,
          ingestMedian,
          copyMedian,
          ratio,
          problems,
        },
        null,
        2,
      ),
    );
  }
  return problems.length === 0;
}

let ok = false;
try {
  ok = await main();
} catch (error) {
  console.error(`\nBENCHMARK FAILED: ${error instanceof Error ? error.message : String(error)}`);
} finally {
  await cleanup();
}
process.exit(ok ? 0 : 1);
