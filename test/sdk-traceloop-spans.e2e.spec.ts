/**
 * Another instrumentation's MCP tool spans reach Errata through `startErrata`'s filtering processor: the real
 * `@traceloop/instrumentation-mcp` names its span `{tool}.tool` and sets `traceloop.span.kind=tool` only after
 * starting it. It starts the span under its `mcp.client.session` span, in the trace the session began at
 * `connect`, not in the agent run's: with the session span filtered out, the tool span is a root.
 */
import { startErrata, withAgentRun } from '@errata/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { McpInstrumentation } from '@traceloop/instrumentation-mcp';
import { expect, it } from 'vitest';
import { toEvents } from '../libs/sdk/src/tracing.spec-helper';
import { connectSeedServer } from './support/seed-mcp-server';

it('a Traceloop tool span is sent, and Errata reads it as a tool call', async () => {
  const exporter = new InMemorySpanExporter();
  const errata = startErrata({ exporter, instrumentMcpSdk: false, flushOnExit: false });
  const traceloop = new McpInstrumentation();
  traceloop.setTracerProvider(errata.tracerProvider);
  traceloop.manuallyInstrument({ Client });
  const server = await connectSeedServer();
  await withAgentRun({ name: 'coordinator' }, () =>
    server.client.callTool({ name: 'echo_meta', arguments: { example: 1 } }),
  );
  await server.close();
  await errata.forceFlush();

  const sent = exporter.getFinishedSpans();
  expect(sent.map((span) => span.name)).toEqual(['echo_meta.tool', 'invoke_agent coordinator']);
  expect(sent[0]!.attributes['traceloop.span.kind']).toBe('tool');
  expect(sent[0]!.parentSpanContext).toBeUndefined();
  expect(errata.stats()).toMatchObject({ exported: 2, dropped: 0, failed: 0 });
  const [event] = toEvents([sent[0]!]);
  expect(event).toMatchObject({ type: 'ToolCallObserved', data: { source: 'traceloop', tool: 'echo_meta' } });
  await errata.shutdown();
});
