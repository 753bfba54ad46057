/**
 * The agent API (DOMAIN.md §4–§5): agent runs as `invoke_agent {name}` spans that nest, escalations and
 * subagent reports as INTERNAL spans inside the active run. Nothing here throws into the host: a span that cannot
 * be recorded is reported to `diag`, and the host's callback runs and returns (or throws) exactly as it would: an
 * async callback's outcome comes back as a promise that settles the same way.
 */
import {
  context,
  createContextKey,
  diag,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
} from '@opentelemetry/api';
import { ESCALATION_SPAN, MAX_REPORT_LIST_ITEMS, storedText, SUBAGENT_REPORT_SPAN } from '@errata/domain';
import {
  ATTR_ERRATA_AGENT_ROLE,
  ATTR_ERRATA_ERROR_CATEGORY,
  ATTR_ERRATA_ERROR_RETRYABLE,
  ATTR_ERRATA_ESCALATION_REASON,
  ATTR_ERRATA_ESCALATION_TARGET,
  ATTR_ERRATA_SUBAGENT_ALTERNATIVES,
  ATTR_ERRATA_SUBAGENT_ATTEMPTED,
  ATTR_ERRATA_SUBAGENT_COMPLETED,
  ATTR_ERRATA_SUBAGENT_PARTIAL_RESULTS,
  ATTR_ERRATA_SUBAGENT_STATUS,
  ATTR_ERRATA_SUBAGENT_TOTAL,
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  GEN_AI_OPERATION_INVOKE_AGENT,
} from './semconv';
import { runningCaptureConfig, textLimitBytes } from './capture-config';
import { nonNegativeInteger } from './non-negative-integer';
import { oneOf, optionValue } from './option-value';
import { errataTracer, warnIfNoTracerProvider } from './tracer';
import type { AgentRole, AgentRun, AgentRunOptions, Escalation, SubagentReport } from './types';
import { safeDiag } from './safe-diag';
import { preciseTime } from './precise-time';

interface RunScope {
  readonly conversationId: string | undefined;
  readonly spanContext: SpanContext;
  /** A subagent run (DOMAIN.md §5): role `subagent`, or inside another run. */
  readonly subagent: boolean;
}

const RUN_KEY = createContextKey('@errata/sdk agent run');
const ESCALATION_TARGETS = new Set(['human', 'user', 'coordinator']);
const SUBAGENT_STATUSES = new Set(['complete', 'partial', 'failed']);
const AGENT_ROLE = oneOf<AgentRole>(['coordinator', 'subagent']);

/** Texts of the agent API leave the process as tool-call texts do: redacted, cut to `textLimitBytes`. */
const stored = (value: string | null): string | null =>
  storedText(value, textLimitBytes(runningCaptureConfig()));
const text = (value: string): string => stored(value) ?? '';

function startRun(options: AgentRunOptions): { span: Span; scope: RunScope } {
  const parent = context.active().getValue(RUN_KEY) as RunScope | undefined;
  const conversationId = options.conversationId ?? parent?.conversationId;
  const defaultRole = (): AgentRole | undefined => (parent === undefined ? undefined : 'subagent');
  // A role Errata does not know is not sent: Errata would read the run as one of neither role.
  const role = optionValue("withAgentRun's role", options.role, AGENT_ROLE, defaultRole);
  const name = typeof options?.name === 'string' && options.name !== '' ? options.name : undefined;
  if (name === undefined) {
    safeDiag(() =>
      diag.warn(`@errata/sdk: withAgentRun needs a name (gen_ai.agent.name); got ${String(options?.name)}`),
    );
  }
  const attributes: Attributes = { [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_INVOKE_AGENT };
  // Without a name the span is `invoke_agent`, as the GenAI conventions name it when the agent's is unknown.
  if (name !== undefined) attributes[ATTR_GEN_AI_AGENT_NAME] = name;
  if (options.id !== undefined) attributes[ATTR_GEN_AI_AGENT_ID] = options.id;
  if (conversationId !== undefined) attributes[ATTR_GEN_AI_CONVERSATION_ID] = conversationId;
  if (role !== undefined) attributes[ATTR_ERRATA_AGENT_ROLE] = role;
  const span = errataTracer().startSpan(
    name === undefined ? GEN_AI_OPERATION_INVOKE_AGENT : `${GEN_AI_OPERATION_INVOKE_AGENT} ${name}`,
    { kind: SpanKind.INTERNAL, attributes, startTime: preciseTime() }, // high-resolution, as tool calls (tool-call-tracer.ts)
    context.active(),
  );
  warnIfNoTracerProvider(span, 'An agent run');
  const subagent = role === 'subagent' || parent !== undefined;
  return { span, scope: { conversationId, spanContext: span.spanContext(), subagent } };
}

/** The span of the innermost agent run in this context, for the span processor's re-parenting. */
export function agentRunSpanContext(runContext: Context): SpanContext | undefined {
  return (runContext.getValue(RUN_KEY) as RunScope | undefined)?.spanContext;
}

/**
 * Runs whose callback has not settled. A span is sent when it ends: a run still open when Errata shuts down (a chat
 * session, a worker waiting on a queue) would never be, and its calls would belong to no agent. Held weakly: a run
 * whose promise the host dropped unsettled can never end, and is let go with it rather than kept until shutdown.
 */
const openRuns = new Set<WeakRef<Span>>();
/** The open run of each promise `withAgentRun` handed back, kept alive by it until the run ends. */
const runsHeldBy = new WeakMap<Promise<unknown>, Span>();
const openRunOf = new WeakMap<Span, WeakRef<Span>>();
const forgetRun = new FinalizationRegistry<WeakRef<Span>>((run) => openRuns.delete(run));

function rememberOpenRun(span: Span): void {
  const run = new WeakRef(span);
  openRuns.add(run);
  openRunOf.set(span, run);
  forgetRun.register(span, run, run);
}

/** Ends every open run still alive now (at shutdown, or when the event loop has emptied); returns how many. */
export function endOpenRuns(): number {
  const open = [...openRuns].map((run) => run.deref()).filter((span) => span !== undefined);
  for (const span of open) endRun(span);
  return open.length;
}

function endRun(span: Span, error?: unknown): void {
  // Ended already by endOpenRuns: the callback settling later changes nothing.
  const run = openRunOf.get(span);
  if (run === undefined) return;
  openRunOf.delete(span);
  openRuns.delete(run);
  forgetRun.unregister(run);
  try {
    if (error !== undefined) {
      const name = error instanceof Error ? error.name : '_OTHER';
      span.setAttribute(ATTR_ERROR_TYPE, name);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end(preciseTime());
  } catch (failure) {
    safeDiag(() => diag.error('@errata/sdk: could not end an agent run span', failure));
  }
}

/**
 * Runs `fn` as an agent run. The run ends when `fn` returns, or when the promise it returns settles; tool calls,
 * escalations, reports and runs started inside belong to it (a run inside a run is a subagent run).
 */
export function withAgentRun<T>(options: AgentRunOptions, fn: (run: AgentRun) => T): T {
  if (typeof fn !== 'function')
    throw new TypeError('@errata/sdk: withAgentRun(options, fn) needs a function as fn');
  let started: { span: Span; scope: RunScope } | undefined;
  try {
    started = startRun(options);
  } catch (error) {
    safeDiag(() => diag.error('@errata/sdk: could not start an agent run span', error));
  }
  if (started === undefined) return fn({ traceId: '', spanId: '', name: String(options?.name ?? '') });
  const { span, scope } = started;
  rememberOpenRun(span);
  const runContext = trace.setSpan(context.active(), span).setValue(RUN_KEY, scope);
  const run: AgentRun = { ...span.spanContext(), name: options.name };
  let result: T;
  try {
    result = context.with(runContext, () => fn(run));
  } catch (error) {
    endRun(span, error);
    throw error;
  }
  if (!(result instanceof Promise)) {
    endRun(span);
    return result;
  }
  // The promise handed back settles as the callback's does. It is derived from it, not the callback's own: a
  // rejection handler on that one would mark the host's rejection handled, and Node would never report it.
  const handedBack: Promise<unknown> = result.then(
    (value: unknown) => {
      runsHeldBy.delete(handedBack);
      endRun(span);
      return value;
    },
    (error: unknown) => {
      runsHeldBy.delete(handedBack);
      endRun(span, error ?? new Error('rejected'));
      throw error;
    },
  );
  // The open run is held by what the host holds, as the callback's own promise held it: a promise the host keeps
  // (a session it will end at shutdown) keeps its run to be ended then; one it drops lets the run go.
  runsHeldBy.set(handedBack, span);
  return handedBack as T;
}

/**
 * Records an instant span in the active run. Nothing reaches the host: a failure, in building the attributes
 * from what the host passed (a BigInt, a cycle) or in recording, goes to `diag`. A null from `attributesOf`: skip.
 */
function recordInstant(name: string, attributesOf: () => Attributes | null): void {
  try {
    const attributes = attributesOf();
    if (attributes === null) return;
    const now = preciseTime();
    errataTracer()
      .startSpan(name, { kind: SpanKind.INTERNAL, attributes, startTime: now }, context.active())
      .end(now);
  } catch (error) {
    safeDiag(() => diag.error(`@errata/sdk: could not record ${name}`, error));
  }
}

/** The agent hands off to a human, the user or its coordinator (an `errata.escalation` span in the active run). */
export function recordEscalation(escalation: Escalation): void {
  recordInstant(ESCALATION_SPAN, () => {
    const target = lowerCase(escalation?.target);
    if (!ESCALATION_TARGETS.has(target)) {
      safeDiag(() =>
        diag.warn(
          `@errata/sdk: escalation target must be human, user or coordinator; got ${String(escalation?.target)}`,
        ),
      );
      return null;
    }
    const attributes: Attributes = { [ATTR_ERRATA_ESCALATION_TARGET]: target };
    if (typeof escalation.reason === 'string' && escalation.reason !== '') {
      attributes[ATTR_ERRATA_ESCALATION_REASON] = text(escalation.reason);
    }
    return attributes;
  });
}

/**
 * The strings of a list, each cut to the text limit, as many as Errata keeps (MAX_REPORT_LIST_ITEMS): a longer list
 * could pass the 1 MiB Errata accepts in one attribute, and the whole report would be refused.
 */
function cleanList(field: string, items: unknown): string[] | undefined {
  if (items === undefined || items === null) return undefined;
  if (!Array.isArray(items)) {
    ignoredField(field, items, 'an array of strings');
    return undefined;
  }
  return items
    .filter((item): item is string => typeof item === 'string')
    .slice(0, MAX_REPORT_LIST_ITEMS)
    .map(text);
}

/** A count of the report: a non-negative integer; anything else is left out, with a `diag` warning. */
function reportCount(field: string, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  const count = nonNegativeInteger(value);
  if (count === null) ignoredField(field, value, 'a non-negative integer');
  return count ?? undefined;
}

const ignoredField = (field: string, value: unknown, expected: string): void =>
  safeDiag(() =>
    diag.warn(
      `@errata/sdk: subagent report ${field} must be ${expected}; got ${JSON.stringify(value) ?? String(value)}; left out`,
    ),
  );

const lowerCase = (value: unknown): string =>
  typeof value === 'string' ? value.toLowerCase() : String(value);

/** A subagent hands back to its coordinator (an `errata.subagent_report` span in the active, subagent, run). */
export function recordSubagentReport(report: SubagentReport): void {
  recordInstant(SUBAGENT_REPORT_SPAN, () => {
    const status = lowerCase(report?.status);
    if (!SUBAGENT_STATUSES.has(status)) {
      safeDiag(() =>
        diag.warn(
          `@errata/sdk: subagent report status must be complete, partial or failed; got ${String(report?.status)}`,
        ),
      );
      return null;
    }
    const run = context.active().getValue(RUN_KEY) as RunScope | undefined;
    if (run?.subagent !== true) {
      safeDiag(() =>
        diag.warn(
          '@errata/sdk: recordSubagentReport outside a subagent run; Errata reads it as the report of the run it is ' +
            "in. Call it inside the subagent's withAgentRun.",
        ),
      );
    }
    return subagentReportAttributes(report, status);
  });
}

function subagentReportAttributes(report: SubagentReport, status: string): Attributes {
  const attributes: Attributes = { [ATTR_ERRATA_SUBAGENT_STATUS]: status };
  const completed = reportCount('completed', report.completed);
  const total = reportCount('total', report.total);
  if (completed !== undefined) attributes[ATTR_ERRATA_SUBAGENT_COMPLETED] = completed;
  if (total !== undefined) attributes[ATTR_ERRATA_SUBAGENT_TOTAL] = total;
  const attempted = cleanList('attempted', report.attempted);
  const alternatives = cleanList('alternatives', report.alternatives);
  if (attempted !== undefined) attributes[ATTR_ERRATA_SUBAGENT_ATTEMPTED] = attempted;
  if (alternatives !== undefined) attributes[ATTR_ERRATA_SUBAGENT_ALTERNATIVES] = alternatives;
  const partial = report.partialResults;
  if (nonNegativeInteger(partial) !== null) {
    attributes[ATTR_ERRATA_SUBAGENT_PARTIAL_RESULTS] = partial as number;
  } else if (partial !== undefined && partial !== null) {
    const json = stored(JSON.stringify(partial) ?? null);
    if (json !== null) attributes[ATTR_ERRATA_SUBAGENT_PARTIAL_RESULTS] = json;
  }
  if (typeof report.errorCategory === 'string') attributes[ATTR_ERRATA_ERROR_CATEGORY] = report.errorCategory;
  if (typeof report.retryable === 'boolean') attributes[ATTR_ERRATA_ERROR_RETRYABLE] = report.retryable;
  return attributes;
}
