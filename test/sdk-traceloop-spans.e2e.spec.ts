/**
 * Another instrumentation's MCP tool spans reach Errata through `startErrata`'s filtering processor, and are not
 * sent twice. The real `@traceloop/instrumentation-mcp` names its span `{tool}.tool` and sets
 * `traceloop.span.kind=tool` only after starting it. It starts the span under its `mcp.client.session` span, in
 * the trace the session began at `connect`, not in the agent run's: with the session span filtered out, the tool
 * span is a root.
 */
import { instrumentMcpClient, startErrata, withAgentRun } from '@errata/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { McpInstrumentation } from '@traceloop/instrumentation-mcp';
import { expect, it } from 'vitest';
import { toEvents } from '../libs/sdk/src/tracing.spec-helper';
import { connectSeedServer } from './support/seed-mcp-server';

it('a Traceloop tool span is sent, and Errata reads it as a tool call; for a client Errata instruments too, only Errata’s span is sent', async () => {
  const exporter = new InMemorySpanExporter();
  const errata = startErrata({ exporter, instrumentMcpSdk: false, flushOnExit: false });
  const traceloop = new McpInstrumentation();
  traceloop.setTracerProvider(errata.tracerProvider);
  traceloop.manuallyInstrument({ Client });
  const traceloopOnly = await connectSeedServer();
  const both = await connectSeedServer();
  instrumentMcpClient(both.client);
  await withAgentRun({ name: 'coordinator' }, async () => {
    await traceloopOnly.client.callTool({ name: 'echo_meta', arguments: { example: 1 } });
    await both.client.callTool({ name: 'echo_meta', arguments: { example: 2 } });
  });
  await traceloopOnly.close();
  await both.close();
  await errata.forceFlush();

  const sent = exporter.getFinishedSpans();
  expect(sent.map((span) => span.name)).toEqual([
    'echo_meta.tool',
    'tools/call echo_meta',
    'invoke_agent coordinator',
  ]);
  const [traceloopSpan, errataSpan, run] = sent;
  expect(traceloopSpan!.attributes['traceloop.span.kind']).toBe('tool');
  expect(traceloopSpan!.parentSpanContext).toBeUndefined();
  expect(errataSpan!.parentSpanContext?.spanId).toBe(run!.spanContext().spanId);
  expect(errata.stats()).toMatchObject({ exported: 3, dropped: 0, failed: 0 });
  const [event] = toEvents([traceloopSpan!]);
  expect(event).toMatchObject({ type: 'ToolCallObserved', data: { source: 'traceloop', tool: 'echo_meta' } });
  await errata.shutdown();
});
