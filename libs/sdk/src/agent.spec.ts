import { context, diag, ProxyTracerProvider, trace } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { recordEscalation, recordSubagentReport, withAgentRun } from './agent';
import { instrumentMcpClient } from './instrument-client';
import { withToolCall } from './tool-call-hints';
import { setErrataTracerProvider } from './tracer';
import {
  brokenTracerProvider,
  captureDiag,
  registerTestTracing,
  toEvents,
  type TestTracing,
} from './tracing.spec-helper';

let tracing: TestTracing;
beforeAll(() => {
  tracing = registerTestTracing();
});
beforeEach(() => tracing.reset());

const byName = (name: string) => tracing.spans().find((s) => s.name === name)!;

describe('agent runs', () => {
  it('given a coordinator that starts a subagent, the subagent run nests, inherits the conversation and is a subagent', async () => {
    const result = await withAgentRun(
      { name: 'support', id: 'agent-1', role: 'coordinator', conversationId: 'conv-9' },
      () =>
        withAgentRun({ name: 'research' }, async () => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          return 'done';
        }),
    );
    expect(result).toBe('done');
    const coordinator = byName('invoke_agent support');
    const subagent = byName('invoke_agent research');
    expect(coordinator.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'support',
      'gen_ai.agent.id': 'agent-1',
      'gen_ai.conversation.id': 'conv-9',
      'errata.agent.role': 'coordinator',
    });
    expect(subagent.attributes).toMatchObject({
      'errata.agent.role': 'subagent',
      'gen_ai.conversation.id': 'conv-9',
    });
    expect(subagent.parentSpanContext?.spanId).toBe(coordinator.spanContext().spanId);
    expect(subagent.ended && coordinator.ended).toBe(true);

    const events = toEvents(tracing.spans());
    expect(events.map((e) => e?.type)).toEqual(['AgentRunObserved', 'AgentRunObserved']);
  });

  it('a top-level run without a role sets none', () => {
    withAgentRun({ name: 'solo' }, () => undefined);
    expect(byName('invoke_agent solo').attributes['errata.agent.role']).toBeUndefined();
  });

  it('the callback gets the run ids', () => {
    const run = withAgentRun({ name: 'ids' }, (r) => r);
    expect(run).toEqual({ ...byName('invoke_agent ids').spanContext(), name: 'ids' });
  });

  it('a rejected callback ends the run as failed and the host gets the very same error', async () => {
    const failure = new RangeError('budget exhausted');
    await expect(
      withAgentRun({ name: 'failing' }, async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    await new Promise((resolve) => setImmediate(resolve));
    const span = byName('invoke_agent failing');
    expect(span.status.code).toBe(2);
    expect(span.attributes['error.type']).toBe('RangeError');
  });

  it('a synchronous throw passes through unchanged', () => {
    const failure = new Error('sync');
    expect(() =>
      withAgentRun({ name: 'sync' }, () => {
        throw failure;
      }),
    ).toThrow(failure);
    expect(byName('invoke_agent sync').ended).toBe(true);
  });
});

describe('escalations and subagent reports', () => {
  it('given a failed lookup, when the agent escalates to a human, then an errata.escalation span sits in the run', () => {
    withAgentRun({ name: 'support' }, () =>
      recordEscalation({
        target: 'human',
        reason: 'Refund of $750 exceeds the $500 limit; mail jane@example.com',
      }),
    );
    const escalation = byName('errata.escalation');
    expect(escalation.parentSpanContext?.spanId).toBe(byName('invoke_agent support').spanContext().spanId);
    expect(escalation.attributes['errata.escalation.target']).toBe('human');
    expect(escalation.attributes['errata.escalation.reason']).not.toContain('jane@example.com');
    const [event] = toEvents([escalation]);
    expect(event).toMatchObject({ type: 'EscalationObserved', data: { target: 'human' } });
  });

  it('a partial subagent report carries the four elements', () => {
    withAgentRun({ name: 'coordinator' }, () =>
      withAgentRun({ name: 'web-research' }, () =>
        recordSubagentReport({
          status: 'partial',
          completed: 2,
          total: 3,
          attempted: ['knowledge_base: ok', 'web_search: rate limited 3 times'],
          alternatives: ['retry web_search after 60 s', 'answer from the knowledge base only'],
          partialResults: [{ source: 'knowledge_base', resultCount: 4 }],
          errorCategory: 'transient',
          retryable: true,
        }),
      ),
    );
    const report = byName('errata.subagent_report');
    expect(report.attributes).toEqual({
      'errata.subagent.status': 'partial',
      'errata.subagent.completed': 2,
      'errata.subagent.total': 3,
      'errata.subagent.attempted': ['knowledge_base: ok', 'web_search: rate limited 3 times'],
      'errata.subagent.alternatives': ['retry web_search after 60 s', 'answer from the knowledge base only'],
      'errata.subagent.partial_results': '[{"source":"knowledge_base","resultCount":4}]',
      'errata.error.category': 'transient',
      'errata.error.retryable': true,
    });
    const [event] = toEvents([report]);
    expect(event).toMatchObject({
      type: 'SubagentReportObserved',
      data: { status: 'partial', completed: 2, total: 3 },
    });
  });

  it('a report with very long lists keeps as many items as Errata does, so that Errata accepts it', () => {
    const long = Array.from({ length: 520 }, (_, i) => `source ${i}: ${'x'.repeat(2100)}`);
    withAgentRun({ name: 'coordinator' }, () =>
      withAgentRun({ name: 'web-research' }, () =>
        recordSubagentReport({ status: 'partial', attempted: long, alternatives: long }),
      ),
    );
    const report = byName('errata.subagent_report');
    expect(report.attributes['errata.subagent.attempted']).toHaveLength(100);
    const [event] = toEvents([report]); // decoded with Errata's 1 MiB limit per attribute: throws if refused
    expect(event).toMatchObject({ type: 'SubagentReportObserved', data: { status: 'partial' } });
  });

  it('a run without a name is an `invoke_agent` span without gen_ai.agent.name, and diag says why', () => {
    const { warnings } = captureDiag();
    try {
      withAgentRun({ role: 'coordinator' } as never, () => undefined);
      const run = byName('invoke_agent');
      expect(run.attributes['gen_ai.agent.name']).toBeUndefined();
      expect(run.attributes['errata.agent.role']).toBe('coordinator');
      expect(String(warnings[0]?.[0])).toMatch(/withAgentRun needs a name/);
    } finally {
      diag.disable();
    }
  });

  it('a role Errata does not know is not sent: diag names it and what is used instead (none, or subagent in a run)', () => {
    const { warnings } = captureDiag();
    try {
      withAgentRun({ name: 'boss', role: 'boss' as never }, () =>
        withAgentRun({ name: 'helper', role: 'helper' as never }, () => undefined),
      );
      expect(byName('invoke_agent boss').attributes['errata.agent.role']).toBeUndefined();
      expect(byName('invoke_agent helper').attributes['errata.agent.role']).toBe('subagent');
      expect(warnings.map((w) => w[0])).toEqual([
        '@errata/sdk: withAgentRun\'s role must be coordinator or subagent; got "boss"; it is left out',
        '@errata/sdk: withAgentRun\'s role must be coordinator or subagent; got "helper"; "subagent" is used instead',
      ]);
    } finally {
      diag.disable();
    }
  });

  it('a target or status written in capitals is read in lower case', () => {
    withAgentRun({ name: 'coordinator' }, () =>
      withAgentRun({ name: 'sub' }, () => {
        recordEscalation({ target: 'Human' as never });
        recordSubagentReport({ status: 'PARTIAL' as never });
      }),
    );
    expect(byName('errata.escalation').attributes['errata.escalation.target']).toBe('human');
    expect(byName('errata.subagent_report').attributes['errata.subagent.status']).toBe('partial');
  });

  it('report fields of the wrong type are left out, each named in a diag warning; the report is still sent', () => {
    const { warnings } = captureDiag();
    try {
      withAgentRun({ name: 'coordinator' }, () =>
        withAgentRun({ name: 'sub' }, () =>
          recordSubagentReport({
            status: 'partial',
            completed: '1' as never,
            total: 4,
            attempted: 'web search' as never,
          }),
        ),
      );
      expect(byName('errata.subagent_report').attributes).toEqual({
        'errata.subagent.status': 'partial',
        'errata.subagent.total': 4,
      });
      expect(warnings.map((w) => String(w[0]))).toEqual([
        expect.stringMatching(/completed must be a non-negative integer; got "1"/),
        expect.stringMatching(/attempted must be an array of strings; got "web search"/),
      ]);
    } finally {
      diag.disable();
    }
  });

  it("a report outside a subagent run is sent, and diag says Errata reads it as that run's report", () => {
    const { warnings } = captureDiag();
    try {
      withAgentRun({ name: 'support', role: 'coordinator' }, () =>
        recordSubagentReport({ status: 'complete' }),
      );
      expect(byName('errata.subagent_report')).toBeDefined();
      expect(String(warnings[0]?.[0])).toMatch(/outside a subagent run/);
      // A run with role subagent, even at the top (a subagent in its own process), is one.
      warnings.length = 0;
      withAgentRun({ name: 'remote', role: 'subagent' }, () => recordSubagentReport({ status: 'complete' }));
      expect(warnings).toEqual([]);
    } finally {
      diag.disable();
    }
  });

  it('withAgentRun and withToolCall without a function throw a TypeError that says so', () => {
    expect(() => withAgentRun({ name: 'x' }, undefined as never)).toThrow(
      /withAgentRun\(options, fn\) needs a function/,
    );
    expect(() => withToolCall({}, undefined as never)).toThrow(/withToolCall\(hints, fn\) needs a function/);
    expect(tracing.spans()).toEqual([]);
  });

  it('invalid input is reported to diag and records nothing, without throwing', () => {
    const { warnings } = captureDiag();
    recordEscalation({ target: 'manager' as never });
    recordSubagentReport({ status: 'done' as never });
    expect(tracing.spans()).toEqual([]);
    expect(warnings).toHaveLength(2);
    diag.disable();
  });
});

describe('never throws into the host', () => {
  it('a tracer that throws leaves the callback running and its result untouched', async () => {
    const { errors } = captureDiag();
    setErrataTracerProvider(brokenTracerProvider());
    try {
      expect(await withAgentRun({ name: 'x' }, async () => 42)).toBe(42);
      expect(() => recordEscalation({ target: 'user' })).not.toThrow();
      expect(errors.length).toBe(2);
    } finally {
      setErrataTracerProvider(undefined);
      diag.disable();
    }
    expect(trace.getTracerProvider()).toBeDefined();
  });

  it('a host diag logger that throws never reaches the caller, whatever the SDK had to say', async () => {
    const down = () => {
      throw new Error('logger down');
    };
    diag.setLogger({ error: down, warn: down, info: down, debug: down, verbose: down });
    try {
      // Misuse the API warns of, with a working tracer
      expect(await withAgentRun({ name: '' }, async () => 1)).toBe(1);
      expect(await withAgentRun({ name: 'x', role: 'boss' as never }, async () => 2)).toBe(2);
      expect(() => recordEscalation({ target: 'manager' as never })).not.toThrow();
      expect(() => recordSubagentReport({ status: 'done' as never })).not.toThrow();
      expect(() => recordSubagentReport({ status: 'complete' })).not.toThrow();
      expect(withToolCall({ retryOf: 'not a span id' }, () => 3)).toBe(3);
      expect(instrumentMcpClient(42 as never)).toBe(42);
      // And failures it reports, with a tracer that throws
      setErrataTracerProvider(brokenTracerProvider());
      expect(await withAgentRun({ name: 'x' }, async () => 4)).toBe(4);
      expect(() => recordEscalation({ target: 'user' })).not.toThrow();
    } finally {
      setErrataTracerProvider(undefined);
      diag.disable();
    }
  });

  it('a run started before any tracer provider exists warns once that it is not recorded; suppressed tracing does not', () => {
    const { warnings } = captureDiag();
    try {
      // Given tracing the host suppressed: no warning
      context.with(suppressTracing(context.active()), () => withAgentRun({ name: 'suppressed' }, () => 1));
      expect(warnings).toEqual([]);
      // Given no provider at all (the API's no-op tracer): one warning, however many runs
      setErrataTracerProvider(new ProxyTracerProvider());
      expect(withAgentRun({ name: 'early' }, () => withAgentRun({ name: 'early too' }, () => 42))).toBe(42);
      expect(warnings.map((w) => String(w[0]))).toEqual([
        expect.stringMatching(
          /An agent run is not recorded: no tracer provider is set up yet\. Call startErrata\(\)/,
        ),
      ]);
      expect(tracing.spans()).toEqual([]);
    } finally {
      setErrataTracerProvider(undefined);
      diag.disable();
    }
  });

  it('options that are not an object (JavaScript callers) go to diag; the callback still runs', () => {
    const { errors } = captureDiag();
    try {
      for (const options of [undefined, null]) {
        expect(withAgentRun(options as never, (run) => run.name)).toBe('');
      }
      expect(errors).toHaveLength(2);
      expect(tracing.spans()).toEqual([]);
    } finally {
      diag.disable();
    }
  });

  it('a report whose partial results cannot be serialized (a BigInt, a cycle) goes to diag, not to the host', () => {
    const { errors } = captureDiag();
    const cycle: Record<string, unknown> = { found: 2 };
    cycle['self'] = cycle;
    try {
      expect(() => recordSubagentReport({ status: 'partial', partialResults: { total: 10n } })).not.toThrow();
      expect(() => recordSubagentReport({ status: 'partial', partialResults: cycle })).not.toThrow();
      expect(errors).toHaveLength(2);
      expect(tracing.spans()).toEqual([]);
    } finally {
      diag.disable();
    }
  });
});
