/**
 * One CLIENT span per `tools/call` (DOMAIN.md §5, research/otel_mcp_spec.md §6), shared by the module-patching
 * instrumentation and `instrumentMcpClient`. The wrappers hand the host exactly what the SDK returned or threw;
 * anything that goes wrong inside them is reported to `diag` and the call goes on uninstrumented.
 */
import {
  context,
  diag,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type HrTime,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { argsFingerprint, isRecord, storedText } from '@errata/domain';
import { CallsInFlight, contextOfServerRequest, inFlightOn, type InFlightCall } from './calls-in-flight';
import { connectionAttributes, rememberProtocolVersion } from './mcp-connection';
import { MCP_SDK_V1, type McpClientShape } from './mcp-client-shape';
import {
  ATTR_ERRATA_ARGS_HASH,
  ATTR_ERRATA_ARGS_SIZE,
  ATTR_ERRATA_RETRY_ATTEMPT,
  ATTR_ERRATA_RETRY_OF,
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ERROR_TYPE_TOOL_ERROR,
  GEN_AI_OPERATION_EXECUTE_TOOL,
  MCP_METHOD_TOOLS_CALL,
} from './semconv';
import { rememberFinishedCall, takeHints } from './tool-call-hints';
import { toolErrorAttributes } from './tool-error';
import { toolResultAttributes } from './tool-result';
import { safeDiag } from './safe-diag';
import { preciseTime } from './precise-time';
import { warnIfNoTracerProvider } from './tracer';
import { clientCaptureConfig, textLimitBytes } from './capture-config';
import { copyOf, tracedParams } from './traced-params';
import type { ToolCallCaptureConfig } from './types';

// Spans start and end on the high-resolution clock (`preciseTime()`). OpenTelemetry JS would stamp the start with
// Date.now(), to the millisecond, and the end as start + a precise duration: a retry started right after a
// failure could then appear to start before that failure ended, and Errata would not count it as a retry.

/** Marks the wrappers, so that a client is never instrumented twice (module patch + instrumentMcpClient). */
export const ERRATA_WRAPPED = Symbol.for('@errata/sdk.wrapped');

type AnyFunction = (this: object, ...args: unknown[]) => unknown;

/**
 * A tools/call an Errata wrapper records, known by the params object it sends: the SDK's callTool hands that very
 * object to the client's `request`, also across the awaits of a host override, so the client's other wrappers
 * (a patched class under an instrumented instance, the `request` wrapper) recognise the call as taken care of.
 */
interface CallInProgress {
  readonly client: object;
  /** The call's span; null for a call sent untraced. */
  readonly span: Span | null;
  /** The client's `request` was called for it, or the call is over: the params no longer stand for it. */
  requestSent: boolean;
  /** The call ended (its span, if any, with it). */
  over: boolean;
  /**
   * What that `request` returned. When callTool throws, whether this had resolved tells an error the MCP SDK
   * raised over a result from the server's own; read only then (a reaction on every call would cost an allocation).
   */
  request: Promise<unknown> | undefined;
}

/**
 * On the params copy the wrapper sends (its own object, made to carry the trace context): a symbol key, which
 * JSON-RPC serialization and schema parsing skip. A WeakMap entry per call made the garbage collector's work grow.
 */
const CALL_IN_PROGRESS = Symbol('@errata/sdk tools/call in progress');
/** Calls sent with the host's own params object (uninstrumented ones), which is never written to. */
const callsByHostParams = new WeakMap<object, CallInProgress>();

/** The call these params are being sent for, not over yet. */
function callNamedBy(params: unknown): CallInProgress | null {
  if (!isRecord(params)) return null;
  const call =
    (params as { [CALL_IN_PROGRESS]?: CallInProgress })[CALL_IN_PROGRESS] ?? callsByHostParams.get(params);
  return call !== undefined && !call.over ? call : null;
}

/** The call these params are being sent for, whose request has not been sent yet. */
function callInProgress(params: unknown): CallInProgress | null {
  const call = callNamedBy(params);
  return call !== null && !call.requestSent ? call : null;
}

const ignore = (): undefined => undefined;

/** Runs `done` once `outcome` settles (at once when it is not a promise); hands `outcome` back unchanged. */
function whenSettled<T>(outcome: T, done: () => void): T {
  if (outcome instanceof Promise) outcome.then(done, done);
  else done();
  return outcome;
}

/**
 * A tools/call that creates a task (`options.task`, or `params.task` as Protocol.request writes it): it only creates
 * the task, whose result comes later (experimental tasks API), whether sent by `callTool` or by `request`.
 */
function isTaskAugmented(params: unknown, options: unknown): boolean {
  return (
    (isRecord(options) && options['task'] !== undefined) || (isRecord(params) && params['task'] !== undefined)
  );
}

/**
 * Resumes a call whose stream was interrupted: with `options.resumptionToken`, the Streamable HTTP transport (the
 * one with `resumeStream`) replays the earlier request's response and sends no tools/call. The interrupted call was
 * recorded when it was sent. Other transports ignore the token and send the call.
 */
function isResumption(client: object, options: unknown): boolean {
  if (!isRecord(options) || !options['resumptionToken']) return false;
  const transport = (client as { transport?: unknown }).transport;
  return isRecord(transport) && typeof transport['resumeStream'] === 'function';
}

/** The client sends through an Errata `request` wrapper, which sees every tools/call it sends. */
const sendsThroughErrata = (client: object): boolean =>
  isErrataWrapper((client as Record<string, unknown>)['request']);

interface StartedCall extends InFlightCall {
  readonly progress: CallInProgress;
  /** The capture settings of the call's client, read once when it starts. */
  readonly config: ToolCallCaptureConfig;
  readonly params: Record<string, unknown>;
  readonly toolName: string;
  readonly attempt: number | null;
  /** The host's `options.signal`, to tell a cancellation from the SDK's own timeout. */
  readonly signal: AbortSignal | undefined;
  /** The calls in flight on the call's connection, this one among them until it ends. */
  readonly inFlight: CallsInFlight;
}

/** Where a failure inside the instrumentation goes: to `diag`, never to the host. */
function reportFailure(what: string, error: unknown): void {
  safeDiag(() => diag.error(`@errata/sdk: ${what} failed`, error));
}

/**
 * Runs `fn`, host code (a hook), so that nothing it throws, or rejects with when it returns a promise, reaches the
 * host. The SDK's own steps on the per-call path use a plain try/catch with `reportFailure` instead: they return
 * nothing, and a closure per step and call is garbage the collector pays for.
 */
function fenced(what: string, fn: () => unknown): void {
  try {
    const returned = fn();
    if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function') {
      Promise.resolve(returned).catch((error: unknown) => reportFailure(what, error));
    }
  } catch (error) {
    reportFailure(what, error);
  }
}

export function markWrapped<F extends AnyFunction>(wrapper: F): F {
  Object.defineProperty(wrapper, ERRATA_WRAPPED, { value: true });
  return wrapper;
}

export const isErrataWrapper = (fn: unknown): boolean =>
  typeof fn === 'function' && (fn as unknown as Record<symbol, unknown>)[ERRATA_WRAPPED] === true;

/** `options.signal` of callTool or request. */
function signalOf(options: unknown): AbortSignal | undefined {
  const signal = isRecord(options) ? options['signal'] : undefined;
  return signal instanceof AbortSignal ? signal : undefined;
}

/** The request id, when sending it took the client's next one (`before`, read just before sending). */
function noteRequestId(span: Span, before: unknown, after: unknown): void {
  try {
    if (typeof before === 'number' && after === before + 1)
      span.setAttribute(ATTR_JSONRPC_REQUEST_ID, String(before));
  } catch (error) {
    reportFailure('reading the request id', error);
  }
}

/** The id `Protocol.request` will give the next request (a private counter of SDK 1.x and 2.x; absent → no id). */
function nextRequestId(client: object): unknown {
  return (client as { _requestMessageId?: unknown })._requestMessageId;
}

export class ToolCallTracer {
  /** `shape`: the SDK line of the clients whose methods this tracer wraps. */
  constructor(
    private readonly tracer: () => Tracer,
    private readonly config: () => ToolCallCaptureConfig,
    private readonly shape: McpClientShape = MCP_SDK_V1,
  ) {}

  /** Wraps `Client.prototype.callTool(params, resultSchema?, options?)` (1.x), `callTool(params, options?)` (2.x). */
  wrapCallTool(original: AnyFunction): AnyFunction {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const tracer = this;
    const { shape } = this;
    return markWrapped(function callTool(this: object, ...args: unknown[]): unknown {
      const options = shape.callToolOptions(args);
      // A host subclass's callTool calling super.callTool, both wrapped: the outer wrapper records the call.
      if (
        callInProgress(args[0]) !== null ||
        isResumption(this, options) ||
        isTaskAugmented(args[0], options)
      )
        return original.apply(this, args);
      return tracer.record(this, original, args, null, options);
    });
  }

  /**
   * Wraps `Client.prototype.request`: a `tools/call` sent with `request()` directly gets its span here; the one
   * `callTool` sends is only watched, to tell the server's errors from those the SDK raises after a result came
   * back, and to read its request id (the 2.x client sends it after awaits of its own). `initialize` is read for
   * the negotiated protocol version.
   */
  wrapRequest(original: AnyFunction): AnyFunction {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const tracer = this;
    const { shape } = this;
    return markWrapped(function request(this: object, ...args: unknown[]): unknown {
      const message = isRecord(args[0]) ? args[0] : undefined;
      const method = message?.['method'];
      if (message !== undefined && method === MCP_METHOD_TOOLS_CALL) {
        // Its request sent already: the 2.x callTool sends it again when the server refuses the Mcp-Param headers
        // it mirrored (-32020, 2026-07-28); still the one call, answered by the request sent last.
        const call = callNamedBy(message['params']);
        if (call === null) {
          const options = shape.requestOptions(args);
          // Task-augmented (experimental tasks API): this request only creates the task; its result comes later.
          if (isTaskAugmented(message['params'], options) || isResumption(this, options))
            return original.apply(this, args);
          return tracer.record(this, original, args, message, options);
        }
        call.requestSent = true;
        const idBefore = nextRequestId(this);
        const pending = original.apply(this, args);
        if (call.span !== null) noteRequestId(call.span, idBefore, nextRequestId(this));
        if (pending instanceof Promise) call.request = pending;
        return pending;
      }
      const pending = original.apply(this, args);
      if (method === 'initialize' && pending instanceof Promise) {
        pending.then(
          (result: unknown) =>
            fenced('reading the initialize result', () => rememberProtocolVersion(this, result)),
          ignore,
        );
      }
      return pending;
    });
  }

  /**
   * Wraps `Protocol.prototype._onrequest(request, extra)`, where a client receives its server's requests: their
   * handlers run in the context of the call they come in the middle of (`contextOfServerRequest`).
   */
  wrapOnRequest(original: AnyFunction): AnyFunction {
    return markWrapped(function _onrequest(this: object, ...args: unknown[]): unknown {
      let handling: Context | undefined;
      try {
        handling = contextOfServerRequest(this, args[0]);
      } catch (error) {
        safeDiag(() => diag.error('@errata/sdk: could not find the call a server request belongs to', error));
      }
      return handling === undefined
        ? original.apply(this, args)
        : context.with(handling, () => original.apply(this, args));
    });
  }

  /**
   * Sends one tools/call, `original.apply(client, args)` with the params swapped for a copy that carries the trace
   * context, and records it as a span. `message`: the request when `original` is `request`, else null (callTool).
   */
  private record(
    client: object,
    original: AnyFunction,
    args: unknown[],
    message: Record<string, unknown> | null,
    options: unknown,
  ): unknown {
    const params = message === null ? args[0] : message['params'];
    let call: StartedCall | null = null;
    try {
      call = this.start(client, params, options);
    } catch (error) {
      safeDiag(() => diag.error('@errata/sdk: could not start a tools/call span', error));
    }
    if (call === null) return this.sendUntraced(client, original, args, params);
    const started = call;
    started.inFlight.add(started);
    // Sent through `request` itself: the call needs no handing over.
    if (message !== null) started.progress.requestSent = true;
    // `args` is the wrapper's own rest array, made for this call and held by nothing else: no copy to swap in the
    // params (or the message) that carry the trace context.
    if (message === null) args[0] = started.params;
    else {
      const tracedMessage = copyOf(message);
      tracedMessage['params'] = started.params;
      args[0] = tracedMessage;
    }
    const idBefore = nextRequestId(client);
    let pending: unknown;
    try {
      pending = context.with(started.context, () => original.apply(client, args));
    } catch (error) {
      this.fail(started, error);
      throw error;
    }
    // Sent with callTool: the client's request wrapper read the id, when and if the request went out.
    if (message !== null) noteRequestId(started.span, idBefore, nextRequestId(client));
    if (!(pending instanceof Promise)) {
      this.succeed(started, pending);
      return pending;
    }
    return pending.then(
      (result: unknown) => {
        this.succeed(started, result);
        return result;
      },
      (error: unknown) => {
        this.fail(started, error);
        throw error;
      },
    );
  }

  /** A call not recorded (its span could not start), once: the client's request for it must not try again. */
  private sendUntraced(client: object, original: AnyFunction, args: unknown[], params: unknown): unknown {
    const untraced: CallInProgress = {
      client,
      span: null,
      requestSent: false,
      over: false,
      request: undefined,
    };
    if (isRecord(params)) callsByHostParams.set(params, untraced);
    const over = () => (untraced.requestSent = untraced.over = true);
    try {
      return whenSettled(original.apply(client, args), over);
    } catch (error) {
      over();
      throw error;
    }
  }

  private start(client: object, params: unknown, options: unknown): StartedCall | null {
    if (!isRecord(params) || typeof params['name'] !== 'string') return null;
    const toolName = params['name'];
    const config = clientCaptureConfig(client) ?? this.config();
    const args = params['arguments'] ?? {};
    const fingerprint = argsFingerprint(args);
    const hints = takeHints();
    const attributes: Attributes = {
      [ATTR_MCP_METHOD_NAME]: MCP_METHOD_TOOLS_CALL,
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_EXECUTE_TOOL,
      [ATTR_GEN_AI_TOOL_NAME]: toolName,
    };
    // Copied key by key: a spread into this literal makes V8 build a slow dictionary-mode object.
    const connection = connectionAttributes(client, this.shape);
    for (const key in connection) attributes[key] = connection[key];
    attributes[ATTR_ERRATA_ARGS_HASH] = fingerprint.hash;
    attributes[ATTR_ERRATA_ARGS_SIZE] = fingerprint.size;
    if (hints.retryOf !== null) attributes[ATTR_ERRATA_RETRY_OF] = hints.retryOf;
    if (hints.attempt !== null) attributes[ATTR_ERRATA_RETRY_ATTEMPT] = hints.attempt;
    if (hints.toolCallId !== null) attributes[ATTR_GEN_AI_TOOL_CALL_ID] = hints.toolCallId;
    if (hints.inputTokens !== null) attributes[ATTR_GEN_AI_USAGE_INPUT_TOKENS] = hints.inputTokens;
    if (hints.outputTokens !== null) attributes[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS] = hints.outputTokens;
    if (config.captureArguments === true) {
      const captured = storedText(JSON.stringify(args) ?? null, textLimitBytes(config));
      if (captured !== null) attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS] = captured;
    }
    const parent = context.active();
    const span = this.tracer().startSpan(
      `${MCP_METHOD_TOOLS_CALL} ${toolName}`,
      { kind: SpanKind.CLIENT, attributes, startTime: preciseTime() },
      parent,
    );
    warnIfNoTracerProvider(span, 'A tools/call');
    const spanContext = trace.setSpan(parent, span);
    const progress: CallInProgress = { client, span, requestSent: false, over: false, request: undefined };
    const sentParams = tracedParams(params, span, spanContext);
    // The copy names the call it is sent for; the host's own object is never written to.
    if (sentParams === params) callsByHostParams.set(params, progress);
    else (sentParams as { [CALL_IN_PROGRESS]?: CallInProgress })[CALL_IN_PROGRESS] = progress;
    return {
      progress,
      config,
      span,
      parent,
      context: spanContext,
      params: sentParams,
      toolName,
      attempt: hints.attempt,
      signal: signalOf(options),
      inFlight: inFlightOn(client),
      inFlightList: null,
      previousInFlight: null,
      nextInFlight: null,
    };
  }

  /**
   * Records an `isError` result as failed before reading it in detail (as `fail` does an error): should that
   * reading throw, Errata still sees a failed call, not an `ok` one.
   */
  private succeed(call: StartedCall, result: unknown): void {
    try {
      if (isRecord(result) && result['isError'] === true) {
        call.span.setAttribute(ATTR_ERROR_TYPE, ERROR_TYPE_TOOL_ERROR);
        call.span.setStatus({ code: SpanStatusCode.ERROR });
      }
      const attributes = toolResultAttributes(result, call.toolName, {
        captureResults: call.config.captureResults === true,
        textLimitBytes: textLimitBytes(call.config),
      });
      call.span.setAttributes(attributes);
    } catch (error) {
      reportFailure('recording a tools/call result', error);
    }
    this.finish(call, result, false);
  }

  private fail(call: StartedCall, error: unknown): void {
    const ended = preciseTime();
    const { request } = call.progress;
    if (request === undefined) {
      // Nothing sent (a task-required tool called with callTool) is not the server's error either.
      this.recordFailure(
        call,
        error,
        ended,
        !call.progress.requestSent && sendsThroughErrata(call.progress.client),
      );
      return;
    }
    // Settled already (callTool awaited it): this runs before the host's own handlers of the error.
    request.then(
      () => this.recordFailure(call, error, ended, true),
      () => this.recordFailure(call, error, ended, false),
    );
  }

  /** `raisedByClient`: the MCP SDK threw without a JSON-RPC error from the server. */
  private recordFailure(call: StartedCall, error: unknown, ended: HrTime, raisedByClient: boolean): void {
    try {
      call.span.setStatus({ code: SpanStatusCode.ERROR });
      const { attributes, message } = toolErrorAttributes(error, {
        textLimitBytes: textLimitBytes(call.config),
        aborted: call.signal?.aborted === true,
        abortReason: call.signal?.reason,
        raisedByClient,
      });
      call.span.setAttributes(attributes);
      call.span.setStatus({ code: SpanStatusCode.ERROR, message });
    } catch (failure) {
      reportFailure('recording a tools/call error', failure);
    }
    this.finish(call, error, true, ended);
  }

  /** Runs whatever happened before: the span always ends. */
  private finish(call: StartedCall, outcome: unknown, failed: boolean, ended: HrTime = preciseTime()) {
    call.progress.requestSent = call.progress.over = true;
    call.inFlight.delete(call);
    // The params copy names this call, and a host may keep what references it (an error's stack can reach the
    // request message): the request's promise would keep the span alive through its context.
    call.progress.request = undefined;
    const hook = call.config.responseHook;
    if (hook !== undefined) {
      const { toolName } = call;
      const info = failed ? { toolName, error: outcome } : { toolName, result: outcome };
      fenced('responseHook', () => hook(call.span, info));
    }
    try {
      rememberFinishedCall(outcome, call.span.spanContext().spanId, call.attempt);
      call.span.end(ended);
    } catch (error) {
      reportFailure('ending a tools/call span', error);
    }
  }
}
