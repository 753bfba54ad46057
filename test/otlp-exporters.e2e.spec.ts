import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as HttpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentTrace } from './support/agent-spans';
import { listEvents, startTestServer, type TestServer } from './support/server';

/** Spans from the real OTLP exporters, over HTTP, into the event log (protobuf, JSON; gzip or not). */
describe.each([
  { exporter: 'exporter-trace-otlp-proto', compression: 'none' },
  { exporter: 'exporter-trace-otlp-proto', compression: 'gzip' },
  { exporter: 'exporter-trace-otlp-http', compression: 'none' },
  { exporter: 'exporter-trace-otlp-http', compression: 'gzip' },
] as const)('$exporter with compression $compression', ({ exporter: kind, compression }) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('postgres');
  });
  afterAll(() => server.close());

  function exporter(): SpanExporter {
    const options = {
      url: `${server.url}/v1/traces`,
      headers: { Authorization: `Bearer ${server.ingestKey}` },
      compression: compression as never,
    };
    return kind === 'exporter-trace-otlp-proto'
      ? new ProtobufExporter(options)
      : new HttpJsonExporter(options);
  }

  function send(target: SpanExporter, spans: ReadableSpan[]): Promise<ExportResult> {
    return new Promise((resolve) => target.export(spans, resolve));
  }

  it('stores tool calls and agent runs as the right events, and drops other spans', async () => {
    const agentTrace = new AgentTrace();
    const t0 = Date.UTC(2026, 10, 30, 9, 0, 0);
    const spans = agentTrace.run('planner', t0, [
      { tool: 'search_tickets', startMs: t0 + 10, durationMs: 25, empty: true },
      {
        tool: 'refund',
        startMs: t0 + 50,
        durationMs: 40,
        isError: true,
        text: 'Refund exceeds policy limit',
        category: 'business',
      },
      { tool: 'lookup', startMs: t0 + 100, durationMs: 5, rpcCode: -32602, text: 'Unknown tool: lookup' },
      {
        tool: 'charge',
        startMs: t0 + 200,
        durationMs: 5,
        isError: true,
        text: 'card declined for ops@example.com, key sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c',
      },
    ]);
    agentTrace.subagentHandBack('billing-subagent', t0 + 300);
    const unrelated = new AgentTrace();
    const plain = unrelated.plain('GET /health', t0);
    const target = exporter();

    const result = await send(target, [...spans, ...plain]);
    await target.shutdown();

    expect(result.code).toBe(ExportResultCode.SUCCESS);
    const events = await listEvents(server.db);
    const ofType = (type: string) => events.filter((e) => e.type === type).map((e) => e.data);
    expect(ofType('EscalationObserved')).toEqual([
      expect.objectContaining({
        target: 'coordinator',
        reason: expect.stringContaining('refund needs approval'),
      }),
    ]);
    expect(ofType('SubagentReportObserved')).toEqual([
      expect.objectContaining({
        status: 'partial',
        completed: 3,
        total: 5,
        attempted: ['search orders', 'fetch invoices'],
        alternatives: ['ask the user for the order id'],
        category: 'transient',
      }),
    ]);
    // Redacted before anything was written: no e-mail address or API key anywhere in the log.
    const stored = JSON.stringify(events);
    expect(stored).not.toMatch(/jane\.doe@example\.com|ops@example\.com|sk-live-4f9a8b7c/);
    expect(stored).toMatch(/card declined/);
    const byTool = Object.fromEntries(
      events.filter((e) => e.type === 'ToolCallObserved').map((e) => [e.toolName, e]),
    );
    expect(events.filter((e) => e.type === 'AgentRunObserved')).toHaveLength(2);
    expect(Object.keys(byTool).sort()).toEqual(['charge', 'lookup', 'refund', 'search_tickets']);
    expect(byTool.search_tickets).toMatchObject({ outcome: 'ok_empty', serverName: 'test-server' });
    expect(byTool.refund).toMatchObject({ outcome: 'tool_error' });
    expect(byTool.lookup).toMatchObject({ outcome: 'protocol_error' });
    const agent = spans.find((span) => span.name === 'invoke_agent planner')!;
    for (const event of Object.values(byTool)) {
      expect(event.parentSpanId).toBe(agent.spanContext().spanId);
      expect(event.traceId).toBe(agent.spanContext().traceId);
    }
    const refund = spans.find((span) => span.name === 'tools/call refund')!;
    expect(byTool.refund!.spanId).toBe(refund.spanContext().spanId);
    expect(byTool.refund!.data).toMatchObject({
      tool: 'refund',
      declared: { category: 'business' },
      span: { startTimeUnixNano: `${BigInt(t0 + 50) * 1_000_000n}` },
    });
    expect(events.some((e) => e.data && JSON.stringify(e.data).includes('GET /health'))).toBe(false);
    // ...but counted: the request's row in ingest_batch says what came in and what became of it.
    const batch = await server.db
      .selectFrom('ingest_batch')
      .select(['spans_received', 'events_appended', 'spans_dropped', 'spans_rejected'])
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(batch).toEqual({
      spans_received: spans.length + plain.length,
      events_appended: spans.length,
      spans_dropped: plain.length,
      spans_rejected: 0,
    });
    await agentTrace.shutdown();
    await unrelated.shutdown();
  });

  it('stores each span once when the same export is delivered twice, as exporters do on retry', async () => {
    const agentTrace = new AgentTrace();
    const t0 = Date.UTC(2026, 10, 30, 10, 0, 0);
    const spans = agentTrace.run('retrier', t0, [
      { tool: 'fetch_page', startMs: t0 + 1, durationMs: 3, isError: true, text: 'upstream timed out' },
      { tool: 'fetch_page', startMs: t0 + 10, durationMs: 3 },
    ]);
    const before = (await listEvents(server.db)).length;
    const target = exporter();

    const first = await send(target, spans);
    const second = await send(target, spans);
    await target.shutdown();

    expect([first.code, second.code]).toEqual([ExportResultCode.SUCCESS, ExportResultCode.SUCCESS]);
    const events = await listEvents(server.db);
    expect(events.length - before).toBe(spans.length);
    const ids = spans.map((span) => span.spanContext().spanId);
    expect(events.filter((e) => ids.includes(e.spanId))).toHaveLength(spans.length);
    await agentTrace.shutdown();
  });
});
