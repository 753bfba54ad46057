/**
 * Another instrumentation's MCP tool spans reach Errata through `startErrata`'s filtering processor, and are not
 * sent twice. The real `@traceloop/instrumentation-mcp` names its span `{tool}.tool` and sets
 * `traceloop.span.kind=tool` only after starting it. It starts the span under its `mcp.client.session` span, in
 * the trace the session began at `connect`, not in the agent run's: with the session span filtered out, the tool
 * span is a root.
 */
import { instrumentMcpClient, startErrata, withAgentRun } from '@errata/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema } from '@modelcontextprotocol/sdk/types.js';
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

it('a result with no content ({content: []}), which Traceloop records with no output attribute, is read as ok_empty', async () => {
  const exporter = new InMemorySpanExporter();
  const errata = startErrata({ exporter, instrumentMcpSdk: false, flushOnExit: false });
  const traceloop = new McpInstrumentation();
  traceloop.setTracerProvider(errata.tracerProvider);
  traceloop.manuallyInstrument({ Client });
  const server = new Server({ name: 'empty-results', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(CallToolRequestSchema, () => ({ content: [] }));
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: 'traceloop-agent', version: '1.0.0' });
  await client.connect(clientTransport);
  await client.callTool({ name: 'search_tickets', arguments: { query: 'nothing' } });
  await client.close();
  await server.close();
  await errata.forceFlush();

  const span = exporter.getFinishedSpans().find((s) => s.name === 'search_tickets.tool');
  expect(span?.attributes['traceloop.entity.input']).toBeDefined();
  expect(span?.attributes['traceloop.entity.output']).toBeUndefined();
  const [event] = toEvents([span!]);
  expect(event).toMatchObject({
    type: 'ToolCallObserved',
    data: { source: 'traceloop', outcome: 'ok_empty' },
  });
  await errata.shutdown();
});
