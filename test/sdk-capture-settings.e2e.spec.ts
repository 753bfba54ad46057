/**
 * The capture settings given to `startErrata` reach every way a runtime uses the SDK: clients wrapped with
 * `instrumentMcpClient` (without settings of their own) and the agent API. A real MCP server (the seed fixture
 * server, over the SDK's in-memory transport) answers the calls; the spans are the ones Errata's exporter gets.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { utf8ByteLength } from '@errata/domain';
import { instrumentMcpClient, recordEscalation, startErrata, type ErrataHandle } from '@errata/sdk';
import { diag } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { connectSeedServer, seedCall } from './support/seed-mcp-server';

const LIMIT = 64;
const TRUNCATED = /…\[truncated \d+ bytes\]$/;
const LONG_REASON = `the refund tool keeps failing for order #10482 ${'and again '.repeat(20)}`;

let handle: ErrataHandle | undefined;
afterEach(async () => {
  await handle?.shutdown();
  handle = undefined;
});

/** What a CommonJS fixture agent (test/fixtures/sdk) prints, run in a process of its own. */
async function fixtureOutput(fixture: string, nodeFlags: string[] = []): Promise<unknown> {
  const script = join(__dirname, 'fixtures/sdk', fixture);
  const { stdout } = await promisify(execFile)(process.execPath, [...nodeFlags, script], { timeout: 60_000 });
  return JSON.parse(stdout.trim());
}

async function spansOf(exporter: InMemorySpanExporter, play: () => Promise<void>): Promise<ReadableSpan[]> {
  await play();
  await handle!.forceFlush();
  return exporter.getFinishedSpans();
}

describe('startErrata’s capture settings', () => {
  it('apply to a client wrapped with instrumentMcpClient and to the agent API', async () => {
    const exporter = new InMemorySpanExporter();
    const hooked: string[] = [];
    handle = startErrata({
      exporter,
      instrumentMcpSdk: false,
      flushOnExit: false,
      captureResults: true,
      captureArguments: true,
      textLimitBytes: LIMIT,
      responseHook: (_span, info) => hooked.push(info.toolName),
    });
    const server = await connectSeedServer();
    const client = instrumentMcpClient(server.client);
    const spans = await spansOf(exporter, async () => {
      await client.callTool({ name: 'echo_meta', arguments: { example: 1 } });
      recordEscalation({ target: 'human', reason: LONG_REASON });
      await server.close();
    });

    const [call, escalation] = spans;
    expect(call!.name).toBe('tools/call echo_meta');
    expect(call!.attributes['gen_ai.tool.call.arguments']).toBe('{"example":1}');
    // The result's text (the request's _meta, with its traceparent) is sent although the call succeeded, within the
    // limit: it is JSON, so shrunk, and still parses. (Redacted too: a trace id that starts with eight decimal
    // digits reads as a long number.)
    const text = call!.attributes['errata.result.text'] as string;
    expect((JSON.parse(text) as { traceparent: string }).traceparent).toMatch(/^00-[\s\S]*…$/);
    expect(utf8ByteLength(text)).toBeLessThanOrEqual(LIMIT);
    expect(hooked).toEqual(['echo_meta']);

    expect(escalation!.name).toBe('errata.escalation');
    const reason = escalation!.attributes['errata.escalation.reason'] as string;
    expect(reason).toMatch(/^the refund tool keeps failing/);
    expect(reason).toMatch(TRUNCATED);
  });

  it('a client given settings of its own keeps them; a later startErrata without capture options sends no texts', async () => {
    const exporter = new InMemorySpanExporter();
    handle = startErrata({ exporter, instrumentMcpSdk: false, flushOnExit: false, captureResults: true });
    const own = await connectSeedServer();
    const ownClient = instrumentMcpClient(own.client, { captureResults: false });
    const spans = await spansOf(exporter, async () => {
      await ownClient.callTool({ name: 'echo_meta', arguments: { example: 1 } });
      await own.close();
    });
    expect(spans.map((span) => span.attributes['errata.result.text'])).toEqual([undefined]);
    await handle.shutdown();

    const afterExporter = new InMemorySpanExporter();
    handle = startErrata({ exporter: afterExporter, instrumentMcpSdk: false, flushOnExit: false });
    const later = await connectSeedServer();
    const laterClient = instrumentMcpClient(later.client);
    const laterSpans = await spansOf(afterExporter, async () => {
      await laterClient.callTool({ name: 'echo_meta', arguments: { example: 1 } });
      recordEscalation({ target: 'human', reason: LONG_REASON });
      await later.close();
    });
    expect(laterSpans[0]!.attributes['errata.result.text']).toBeUndefined();
    expect(laterSpans[0]!.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    expect(laterSpans[1]!.attributes['errata.escalation.reason']).toBe(LONG_REASON);
  });

  it('a client given a text limit under 1 byte (0.5), or a capture setting that is no boolean: one diag warning each, and a failure still sends its text', async () => {
    const warnings: unknown[] = [];
    const ignore = () => undefined;
    diag.setLogger({
      warn: (message) => warnings.push(message),
      error: ignore,
      info: ignore,
      debug: ignore,
      verbose: ignore,
    });
    try {
      const exporter = new InMemorySpanExporter();
      handle = startErrata({ exporter, instrumentMcpSdk: false, flushOnExit: false });
      const server = await connectSeedServer();
      const client = instrumentMcpClient(server.client, {
        textLimitBytes: 0.5,
        captureResults: 'yes' as never,
      });
      const spans = await spansOf(exporter, async () => {
        await client.callTool(seedCall('hidden failure: isError false with "ERROR'));
        await client.callTool(seedCall('hidden failure: isError false with "ERROR'));
        await server.close();
      });
      for (const span of spans) expect(span.attributes['errata.result.text']).toMatch(/ERROR/);
      expect(warnings).toEqual([
        '@errata/sdk: captureResults must be true or false; got "yes"; false is used instead',
        '@errata/sdk: textLimitBytes must be a number of at least 1; got 0.5; 2048 is used instead',
      ]);
    } finally {
      diag.disable();
    }
  });

  it('a client given settings of its own keeps them when its class is patched (instrumentMcpClient leaves it be)', async () => {
    expect(await fixtureOutput('own-settings-agent.cjs')).toEqual({
      classPatched: true,
      texts: ["note 1: the customer's private address", null],
      hooked: { running: 1, own: 1 },
    });
  });

  it('after shutdown, a new startErrata keeps the MCP SDK patched by the same instrumentation, with its own settings', async () => {
    // One instrumentation per process: OpenTelemetry's module hooks would keep every earlier one alive.
    expect(await fixtureOutput('restart-agent.cjs')).toEqual({
      sameInstrumentation: true,
      first: ['tools/call read_note: note 1'],
      second: ['tools/call read_note: (no text)'],
    });
  });

  it('lets go of runs whose promise the host dropped unsettled; a run it keeps is still ended at shutdown', async () => {
    expect(await fixtureOutput('abandoned-runs.cjs', ['--expose-gc'])).toEqual({ open: 1 });
  });

  it('leaves a rejected run the host never handles unhandled: Node reports it and exits with code 1', async () => {
    const script = join(__dirname, 'fixtures/sdk/unhandled-run-rejection.cjs');
    const outcome = await promisify(execFile)(process.execPath, [script], { timeout: 60_000 }).then(
      (output) => ({ code: 0, ...output }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('nobody handles this rejection');
    expect(outcome.stdout).not.toContain('still alive');
  });
});
