import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

export interface ToolCallSpec {
  readonly tool: string;
  readonly server?: string;
  readonly startMs: number;
  readonly durationMs: number;
  readonly isError?: boolean;
  readonly empty?: boolean;
  readonly text?: string;
  readonly category?: string;
  readonly argsHash?: string;
  readonly rpcCode?: number;
  readonly extra?: Attributes;
}

/**
 * Real OpenTelemetry SDK spans shaped as DOMAIN.md §5 says an instrumented agent sends them: an
 * `invoke_agent` span with `tools/call` CLIENT children. Collected in memory, then exported by whatever
 * exporter the test wants to exercise.
 */
export class AgentTrace {
  readonly memory = new InMemorySpanExporter();
  private readonly provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'test-agent' }),
    spanProcessors: [new SimpleSpanProcessor(this.memory)],
  });
  private readonly tracer = this.provider.getTracer('errata-tests');

  /** An agent run with `calls`; `agent` replaces agent span attributes (undefined leaves one out). */
  run(
    agentName: string,
    startMs: number,
    calls: readonly ToolCallSpec[],
    role = 'coordinator',
    agent: Attributes = {},
  ): ReadableSpan[] {
    const agentSpan = this.tracer.startSpan(`invoke_agent ${agentName}`, {
      kind: SpanKind.INTERNAL,
      startTime: startMs,
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': agentName,
        'gen_ai.agent.id': `${agentName}-1`,
        'errata.agent.role': role,
        ...agent,
      },
    });
    const parent = trace.setSpan(context.active(), agentSpan);
    let endMs = startMs;
    for (const call of calls) {
      this.toolCall(parent, call);
      endMs = Math.max(endMs, call.startMs + call.durationMs);
    }
    agentSpan.end(endMs + 1);
    return this.memory.getFinishedSpans();
  }

  /**
   * A coordinator's run fanning out to `subagents` runs in the same trace, each an `invoke_agent` span under the
   * coordinator's with its own calls (DOMAIN.md §5): a trace of many runs.
   */
  fanOut(
    agentName: string,
    startMs: number,
    subagents: readonly { agentName: string; calls: readonly ToolCallSpec[] }[],
  ): ReadableSpan[] {
    const coordinator = this.tracer.startSpan(`invoke_agent ${agentName}`, {
      kind: SpanKind.INTERNAL,
      startTime: startMs,
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': agentName,
        'errata.agent.role': 'coordinator',
      },
    });
    const inCoordinator = trace.setSpan(context.active(), coordinator);
    let endMs = startMs;
    for (const subagent of subagents) {
      const firstMs = Math.min(...subagent.calls.map((call) => call.startMs));
      const lastMs = Math.max(...subagent.calls.map((call) => call.startMs + call.durationMs));
      const span = this.tracer.startSpan(
        `invoke_agent ${subagent.agentName}`,
        {
          kind: SpanKind.INTERNAL,
          startTime: firstMs,
          attributes: {
            'gen_ai.operation.name': 'invoke_agent',
            'gen_ai.agent.name': subagent.agentName,
            'errata.agent.role': 'subagent',
          },
        },
        inCoordinator,
      );
      for (const call of subagent.calls) this.toolCall(trace.setSpan(context.active(), span), call);
      span.end(lastMs);
      endMs = Math.max(endMs, lastMs);
    }
    coordinator.end(endMs + 1);
    return this.memory.getFinishedSpans();
  }

  /**
   * An agent run whose calls sit under a span of another kind (a model step): that span is no event, and stays in the
   * log only as a span edge.
   */
  runInStep(agentName: string, startMs: number, calls: readonly ToolCallSpec[]): ReadableSpan[] {
    const agentSpan = this.tracer.startSpan(`invoke_agent ${agentName}`, {
      kind: SpanKind.INTERNAL,
      startTime: startMs,
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': agentName },
    });
    const step = this.tracer.startSpan(
      'chat step',
      { startTime: startMs },
      trace.setSpan(context.active(), agentSpan),
    );
    const endMs = Math.max(startMs, ...calls.map((call) => call.startMs + call.durationMs));
    for (const call of calls) this.toolCall(trace.setSpan(context.active(), step), call);
    step.end(endMs);
    agentSpan.end(endMs + 1);
    return this.memory.getFinishedSpans();
  }

  private toolCall(parent: ReturnType<typeof context.active>, call: ToolCallSpec): Span {
    const attributes: Attributes = {
      'mcp.method.name': 'tools/call',
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': call.tool,
      'jsonrpc.request.id': String(call.startMs),
      'network.transport': 'pipe',
      'errata.server.name': call.server ?? 'test-server',
      'errata.server.version': '1.0.0',
      'errata.args.hash': call.argsHash ?? 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
      'errata.args.size': 42,
      ...(call.extra ?? {}),
    };
    if (call.rpcCode !== undefined) {
      attributes['error.type'] = String(call.rpcCode);
      attributes['rpc.response.status_code'] = String(call.rpcCode);
    } else {
      attributes['errata.result.is_error'] = call.isError ?? false;
      attributes['errata.result.empty'] = call.empty ?? false;
      attributes['errata.result.item_count'] = call.empty ? 0 : 1;
      if (call.isError) attributes['error.type'] = 'tool_error';
      if (call.text !== undefined) attributes['errata.result.text'] = call.text;
      if (call.category !== undefined) attributes['errata.error.category'] = call.category;
    }
    const span = this.tracer.startSpan(
      `tools/call ${call.tool}`,
      { kind: SpanKind.CLIENT, startTime: call.startMs, attributes },
      parent,
    );
    if (call.isError || call.rpcCode !== undefined)
      span.setStatus({ code: SpanStatusCode.ERROR, message: call.text ?? '' });
    span.end(call.startMs + call.durationMs);
    return span;
  }

  /**
   * An `errata.escalation` and an `errata.subagent_report` inside a subagent run (DOMAIN.md §5); `report` replaces
   * report attributes and `escalation` the escalation's (undefined leaves one out).
   */
  subagentHandBack(
    agentName: string,
    startMs: number,
    report: Attributes = {},
    escalation: Attributes = {},
  ): ReadableSpan[] {
    const agent = this.tracer.startSpan(`invoke_agent ${agentName}`, {
      startTime: startMs,
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': agentName,
        'errata.agent.role': 'subagent',
      },
    });
    const parent = trace.setSpan(context.active(), agent);
    this.tracer
      .startSpan(
        'errata.escalation',
        {
          startTime: startMs + 1,
          attributes: {
            'errata.escalation.target': 'coordinator',
            'errata.escalation.reason': 'refund needs approval; mail jane.doe@example.com',
            ...escalation,
          },
        },
        parent,
      )
      .end(startMs + 2);
    this.tracer
      .startSpan(
        'errata.subagent_report',
        {
          startTime: startMs + 3,
          attributes: {
            'errata.subagent.status': 'partial',
            'errata.subagent.completed': 3,
            'errata.subagent.total': 5,
            'errata.subagent.attempted': ['search orders', 'fetch invoices'],
            'errata.subagent.alternatives': ['ask the user for the order id'],
            'errata.subagent.partial_results': 3,
            'errata.error.category': 'transient',
            'errata.error.retryable': true,
            ...report,
          },
        },
        parent,
      )
      .end(startMs + 4);
    agent.end(startMs + 5);
    return this.memory.getFinishedSpans();
  }

  /** A span of some other instrumentation, which Errata accepts and drops. */
  plain(name: string, startMs: number): ReadableSpan[] {
    this.tracer.startSpan(name, { kind: SpanKind.SERVER, startTime: startMs }).end(startMs + 1);
    return this.memory.getFinishedSpans();
  }

  spans(): ReadableSpan[] {
    return this.memory.getFinishedSpans();
  }

  async shutdown(): Promise<void> {
    await this.provider.shutdown();
  }
}
