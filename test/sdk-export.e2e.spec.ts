/**
 * @errata/sdk end to end: agent runtimes in their own processes — CommonJS with `startErrata`, ESM with
 * `node --import @errata/sdk/register` — patch the MCP SDK as it loads, export through the OTLP protobuf exporter
 * configured only by the standard OTEL_EXPORTER_OTLP_* variables, and a real Errata stores what they sent:
 * Errata's spans only, with a tool call under a host span still inside its agent run.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/server';

const run = promisify(execFile);
const FIXTURES = join(__dirname, 'fixtures/sdk');

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('postgres');
});
afterAll(() => server?.close());

function exporterEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    OTEL_EXPORTER_OTLP_ENDPOINT: server.url,
    OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer%20${server.ingestKey}`,
    OTEL_SERVICE_NAME: 'fixture-agent',
  };
}

interface StoredEvent {
  type: string;
  tool_name: string | null;
  outcome: string | null;
  span_id: string;
  parent_span_id: string | null;
  data: Record<string, unknown>;
}

/** The stored events of the one trace whose agent run has this conversation id, in start order. */
async function scenarioEvents(conversationId: string): Promise<StoredEvent[]> {
  const { rows } = await sql<StoredEvent>`
    SELECT type, tool_name, outcome, encode(span_id, 'hex') AS span_id, encode(parent_span_id, 'hex') AS parent_span_id, data
      FROM event
     WHERE trace_id = (SELECT trace_id FROM event WHERE type = 'AgentRunObserved' AND data->>'conversationId' = ${conversationId})
     ORDER BY start_time, type`.execute(server.db);
  return rows;
}

function expectScenario(events: StoredEvent[]) {
  expect(events.map((e) => [e.type, e.tool_name, e.outcome])).toEqual([
    ['AgentRunObserved', null, null],
    ['ToolCallObserved', 'echo', 'ok'],
    ['ToolCallObserved', 'get-sum', 'tool_error'],
    ['EscalationObserved', null, null],
  ]);
  const [run, echo, sum, escalation] = events;
  // The host's "plan step" span between the run and the echo call was not sent; the call still hangs off the run.
  for (const child of [echo, sum, escalation]) expect(child!.parent_span_id).toBe(run!.span_id);
  expect(echo!.data).toMatchObject({
    source: 'errata',
    server: { name: 'mcp-servers/everything' },
    mcp: { transport: 'pipe', protocolVersion: '2025-11-25' },
  });
  expect(run!.data).toMatchObject({
    agentName: 'support',
    role: 'coordinator',
    conversationId: expect.any(String),
  });
}

describe('a CommonJS runtime with startErrata', () => {
  it('sends its run, calls and escalation, not its own spans; reports what it exported', async () => {
    const { stdout } = await run(process.execPath, [join(FIXTURES, 'cjs-agent.cjs')], {
      env: { ...exporterEnv(), FIXTURE_CONVERSATION: 'cjs' },
      timeout: 60_000,
    });
    const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      stats: Record<string, number>;
      servesApiTracers: boolean;
    };
    expect(report.servesApiTracers).toBe(true);
    expect(report.stats).toMatchObject({ exported: 4, dropped: 0, failed: 0, queued: 0 });
    expect(report.stats['filtered']).toBeGreaterThanOrEqual(1);
    expectScenario(await scenarioEvents('cjs'));
  });
});

interface FixtureReport {
  stats: Record<string, number>;
  servesApiTracers: boolean;
  hostSpans: string[] | null;
}

async function runWithHostProvider(mode: string, conversation: string): Promise<FixtureReport> {
  const { stdout } = await run(process.execPath, [join(FIXTURES, 'cjs-agent.cjs')], {
    env: { ...exporterEnv(), FIXTURE_CONVERSATION: conversation, FIXTURE_HOST_PROVIDER: mode },
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as FixtureReport;
}

describe('startErrata when the host already registered a global provider', () => {
  it('does not replace it, and still exports its own spans', async () => {
    const report = await runWithHostProvider('before', 'second-provider');
    expect(report.servesApiTracers).toBe(false);
    expect(report.stats).toMatchObject({ exported: 4, dropped: 0, failed: 0 });
    // The host's "plan step" span went to the host's provider, never to Errata's: the call still hangs off the run.
    expect(report.hostSpans).toEqual(['plan step']);
    expectScenario(await scenarioEvents('second-provider'));
  });

  it('installs a context manager when the host registered only a provider, so runs keep their calls', async () => {
    const report = await runWithHostProvider('basic', 'basic-provider');
    expect(report.servesApiTracers).toBe(false);
    expect(report.stats).toMatchObject({ exported: 4, dropped: 0, failed: 0 });
    expect(report.hostSpans).toEqual(['plan step']);
    expectScenario(await scenarioEvents('basic-provider'));
  });
});

describe('a host that samples its traces', () => {
  it("records and exports every Errata span inside a host span it did not sample (Errata's own sampler)", async () => {
    const report = await runWithHostProvider('sampled-out', 'sampled-out');
    expect(report.stats).toMatchObject({ exported: 4, dropped: 0, failed: 0 });
    // The host recorded none of its own spans: its sampler still decides for them.
    expect(report.hostSpans).toEqual([]);
    expectScenario(await scenarioEvents('sampled-out'));
  });
});

describe('a host provider registered after startErrata (NodeSDK started later)', () => {
  it('registers and keeps its spans; Errata keeps exporting its own', async () => {
    const report = await runWithHostProvider('after', 'provider-after');
    expect(report.servesApiTracers).toBe(true);
    // A tracer taken before the host registered moves with the API to the host's provider.
    expect(report.hostSpans).toEqual(['early tracer, after the host', 'plan step']);
    expect(report.stats).toMatchObject({ exported: 4, filtered: 1, dropped: 0, failed: 0 });
    expectScenario(await scenarioEvents('provider-after'));
  });
});

describe('startErrata configured by ERRATA_API_KEY alone', () => {
  it('sends the key as the Bearer token', async () => {
    const { OTEL_EXPORTER_OTLP_HEADERS: _headers, ...env } = exporterEnv();
    const { stdout } = await run(process.execPath, [join(FIXTURES, 'cjs-agent.cjs')], {
      env: { ...env, ERRATA_API_KEY: server.ingestKey, FIXTURE_CONVERSATION: 'errata-api-key' },
      timeout: 60_000,
    });
    const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as { stats: Record<string, number> };
    expect(report.stats).toMatchObject({ exported: 4, dropped: 0, failed: 0 });
    expectScenario(await scenarioEvents('errata-api-key'));
  });

  it('ERRATA_ENDPOINT wins over the OTEL_EXPORTER_OTLP_* endpoint a host exports elsewhere with', async () => {
    const { OTEL_EXPORTER_OTLP_HEADERS: _headers, ...env } = exporterEnv();
    const { stdout } = await run(process.execPath, [join(FIXTURES, 'cjs-agent.cjs')], {
      env: {
        ...env,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', // the host's collector (nothing listens here)
        ERRATA_ENDPOINT: server.url,
        ERRATA_API_KEY: server.ingestKey,
        FIXTURE_CONVERSATION: 'errata-endpoint',
      },
      timeout: 60_000,
    });
    const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as { stats: Record<string, number> };
    expect(report.stats).toMatchObject({ exported: 4, dropped: 0, failed: 0 });
    expectScenario(await scenarioEvents('errata-endpoint'));
  });
});

describe('the register entry and OTEL_LOG_LEVEL', () => {
  const escalateOnce = "require('@errata/sdk').recordEscalation({ target: 'human' })";
  const withWrongKey = async (extra: NodeJS.ProcessEnv) => {
    const env = { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: server.url, ERRATA_API_KEY: 'wrong-key' };
    delete env['OTEL_LOG_LEVEL'];
    const args = ['--require', '@errata/sdk/register', '-e', escalateOnce];
    return run(process.execPath, args, { env: { ...env, ...extra }, timeout: 60_000 });
  };

  it('says on stderr that Errata refused the export when OTEL_LOG_LEVEL asks for warnings', async () => {
    const { stderr } = await withWrongKey({ OTEL_LOG_LEVEL: 'warn' });
    expect(stderr).toMatch(/@errata\/sdk: export of 1 spans failed/);
    expect(stderr).toMatch(/Unauthorized|401/);
  });

  it('says on stderr how many spans a process.exit() lost, when OTEL_LOG_LEVEL asks for warnings', async () => {
    const env = { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: server.url, OTEL_LOG_LEVEL: 'warn' };
    const exitAtOnce = `${escalateOnce}; process.exit(0)`;
    const args = ['--require', '@errata/sdk/register', '-e', exitAtOnce];
    const { stderr } = await run(process.execPath, args, { env, timeout: 60_000 });
    expect(stderr).toMatch(
      /@errata\/sdk: 1 spans were not sent: the process exited before they were flushed/,
    );
  });

  it('stays quiet without OTEL_LOG_LEVEL, or with it empty, as OpenTelemetry does', async () => {
    expect((await withWrongKey({})).stderr).toBe('');
    expect((await withWrongKey({ OTEL_LOG_LEVEL: '' })).stderr).toBe('');
  });
});

describe('an ESM runtime started with --import @errata/sdk/register', () => {
  it('is patched by the loader hook and flushes when it ends', async () => {
    await run(process.execPath, ['--import', '@errata/sdk/register', join(FIXTURES, 'esm-agent.mjs')], {
      env: { ...exporterEnv(), FIXTURE_CONVERSATION: 'esm' },
      timeout: 60_000,
    });
    expectScenario(await scenarioEvents('esm'));
  });

  it("wraps only the MCP SDK's modules (wrapping every import slowed the start of large applications)", async () => {
    const args = ['--import', '@errata/sdk/register', join(FIXTURES, 'wrapped-modules-probe.mjs')];
    const { stdout } = await run(process.execPath, args, { env: exporterEnv(), timeout: 60_000 });
    expect(JSON.parse(stdout.trim())).toEqual({ applicationModule: false, mcpClient: true });
  });

  it('registers no loader hook with OTEL_SDK_DISABLED=true (it would only slow every import down)', async () => {
    const probe = async (env: NodeJS.ProcessEnv) => {
      const args = ['--import', '@errata/sdk/register', join(FIXTURES, 'loader-hook-probe.mjs')];
      const { stdout } = await run(process.execPath, args, { env, timeout: 60_000 });
      return JSON.parse(stdout.trim()) as { loaderHook: boolean };
    };
    expect(await probe(exporterEnv())).toEqual({ loaderHook: true });
    expect(await probe({ ...exporterEnv(), OTEL_SDK_DISABLED: 'true' })).toEqual({ loaderHook: false });
  });
});

describe.each([
  ['OpenTelemetry JS SDK 2.x', '2'],
  ['OpenTelemetry JS SDK 1.x, whose spans are shaped differently', '1'],
])('a runtime that keeps its own tracer provider, %s', (_sdk, version) => {
  it('adds createErrataSpanProcessor() to it: its other exporter gets every span, Errata only its own', async () => {
    const conversation = `host-provider-sdk${version}`;
    const { stdout } = await run(process.execPath, [join(FIXTURES, 'host-provider-agent.cjs')], {
      env: { ...exporterEnv(), FIXTURE_CONVERSATION: conversation, FIXTURE_OTEL_SDK: version },
      timeout: 60_000,
    });
    const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      elsewhere: number;
      errata: Record<string, number>;
    };
    expect(report.elsewhere).toBe(5);
    expect(report.errata).toMatchObject({ exported: 4, filtered: 1, dropped: 0, failed: 0 });
    expectScenario(await scenarioEvents(conversation));
  });
});

describe('ingest counts', () => {
  it('Errata received exactly the spans it stores', async () => {
    const { rows } = await sql<{ received: number; appended: number; dropped: number }>`
      SELECT sum(spans_received)::int AS received, sum(events_appended)::int AS appended, sum(spans_dropped)::int AS dropped
        FROM ingest_batch`.execute(server.db);
    expect(rows[0]).toEqual({ received: 40, appended: 40, dropped: 0 });
  });
});
