/**
 * The tools/calls of each MCP connection that have started and not ended, for the requests its server sends in the
 * middle of them (sampling, elicitation, roots): those run in the context of the call they belong to.
 */
import { trace, type Context, type Span } from '@opentelemetry/api';
import { isRecord } from '@errata/domain';
import { connectionKey } from './mcp-connection';

/** A call in flight: its span and contexts, and its place in its connection's list (the list's own fields). */
export interface InFlightCall {
  readonly span: Span;
  /** The context the call was made in, and the call's own (the first with its span). */
  readonly parent: Context;
  readonly context: Context;
  /** The list it is in, and its neighbours there. */
  inFlightList: CallsInFlight | null;
  previousInFlight: InFlightCall | null;
  nextInFlight: InFlightCall | null;
}

/**
 * The recorded calls of one connection not ended yet, oldest first, for the requests its server sends meanwhile: a
 * list linked through the calls themselves. A Set allocated a new table each time its only entry was deleted, that
 * is on every call.
 */
export class CallsInFlight {
  size = 0;
  private first: InFlightCall | null = null;
  private last: InFlightCall | null = null;

  add(call: InFlightCall): void {
    if (call.inFlightList !== null) return;
    call.inFlightList = this;
    call.previousInFlight = this.last;
    call.nextInFlight = null;
    if (this.last === null) this.first = call;
    else this.last.nextInFlight = call;
    this.last = call;
    this.size++;
  }

  delete(call: InFlightCall): void {
    if (call.inFlightList !== this) return;
    const { previousInFlight: previous, nextInFlight: next } = call;
    if (previous === null) this.first = next;
    else previous.nextInFlight = next;
    if (next === null) this.last = previous;
    else next.previousInFlight = previous;
    call.inFlightList = null;
    call.previousInFlight = null;
    call.nextInFlight = null;
    this.size--;
  }

  *[Symbol.iterator](): IterableIterator<InFlightCall> {
    for (let call = this.first; call !== null; call = call.nextInFlight) yield call;
  }
}

/** The calls in flight of each connection (`connectionKey`). */
const callsInFlight = new WeakMap<object, CallsInFlight>();

/**
 * The context to handle a request from the server in (sampling, elicitation, roots): that of the client's call it
 * comes in the middle of. Over stdio the SDK hands it over in the context `connect()` ran in, so a tool call or an
 * escalation made by the handler would belong to no run, or to the run that connected. A request whose
 * `_meta.traceparent` (a server that passes the trace context on) names a call's trace: the call it names, else the
 * only call of that trace, else, when the calls of that trace were made in one context (their run), that context.
 * Otherwise the only call in flight. Anything else is unknowable, and the context is left as it is.
 */
export function contextOfServerRequest(client: object, request: unknown): Context | undefined {
  const calls = callsInFlight.get(connectionKey(client));
  if (calls === undefined || calls.size === 0) return undefined;
  const params = isRecord(request) ? request['params'] : undefined;
  const meta = isRecord(params) ? params['_meta'] : undefined;
  const traceparent = isRecord(meta) ? meta['traceparent'] : undefined;
  if (typeof traceparent === 'string') {
    const [, traceId, spanId] = traceparent.split('-');
    const ofTrace = [...calls].filter((call) => call.span.spanContext().traceId === traceId);
    const named = ofTrace.find((call) => call.span.spanContext().spanId === spanId);
    if (named !== undefined) return named.context;
    if (ofTrace.length === 1) return ofTrace[0]?.context;
    if (ofTrace.length > 1) {
      const parents = new Set(ofTrace.map((call) => trace.getSpanContext(call.parent)?.spanId));
      return parents.size === 1 ? ofTrace[0]?.parent : undefined;
    }
  }
  return calls.size === 1 ? [...calls][0]?.context : undefined;
}

/** The calls in flight of the client's connection; its list is made at its first call. */
export function inFlightOn(client: object): CallsInFlight {
  const key = connectionKey(client);
  let calls = callsInFlight.get(key);
  if (calls === undefined) callsInFlight.set(key, (calls = new CallsInFlight()));
  return calls;
}
