#!/usr/bin/env node
// What each piece of the SDK's per-call work costs on its own, on the calls and results of the SDK benchmark's
// workload: CPU µs per operation, medians over interleaved runs. In a traced call the same work costs more (caches
// cold between the MCP SDK's steps, and the garbage it leaves): these are floors, the figures any implementation of
// that piece of DOMAIN.md §5 would have to beat.
//
//   npm run build && node bench/sdk/pieces.mjs      # BENCH_PIECES_CALLS (200000), BENCH_PIECES_RUNS (5)
import { createRequire } from 'node:module';
import { argsFingerprint, DEFAULT_TEXT_LIMIT_BYTES } from '@errata/domain';
import { fmt } from '../shared/format.mjs';
import { intEnv } from '../shared/env.mjs';
import { median } from '../shared/median.mjs';
import { ROOT } from './settings.mjs';
import { callParams, lookupResult, searchResult } from './workload.mjs';

const CALLS = intEnv('BENCH_PIECES_CALLS', 200_000, 1_000, 10_000_000);
const RUNS = intEnv('BENCH_PIECES_RUNS', 5, 1, 50);
/** Distinct objects per piece, so that no one object's hidden class or string stays hot in the caches. */
const POOL = 1_000;

const fromRoot = createRequire(`${ROOT}/`);
const { toolResultAttributes } = fromRoot('./libs/sdk/dist/tool-result.js');
const { tracedParams } = fromRoot('./libs/sdk/dist/traced-params.js');
const api = fromRoot('@opentelemetry/api');
const { BasicTracerProvider } = fromRoot('@opentelemetry/sdk-trace-base');
const { CallToolRequestSchema } = fromRoot('@modelcontextprotocol/sdk/types.js');

const resultOptions = { captureResults: false, textLimitBytes: DEFAULT_TEXT_LIMIT_BYTES };
const tracer = new BasicTracerProvider().getTracer('bench-pieces');
const span = tracer.startSpan('tools/call lookup_order');
const spanContext = api.trace.setSpan(api.ROOT_CONTEXT, span);

const pool = (make) => Array.from({ length: POOL }, (_, i) => make(i));
const resultOf = ({ name, arguments: args }) =>
  name === 'lookup_order' ? lookupResult(args.orderId) : searchResult(args);
const calls = pool(callParams);
const tracedCalls = calls.map((params) => tracedParams(params, span, spanContext));
const analyse = (results) => (i) => toolResultAttributes(results[i % POOL], 'lookup_order', resultOptions);

/** The attributes of an errata span on a successful lookup, beside the three every tools/call span has. */
const ERRATA_ATTRIBUTES = {
  'errata.server.name': 'orders-mcp',
  'errata.server.version': '1.4.0',
  'mcp.protocol.version': '2025-11-25',
  'errata.args.hash': '0123456789abcdef0123456789abcdef',
  'errata.args.size': 20,
  'jsonrpc.request.id': '42',
};
const RESULT_ATTRIBUTES = {
  'errata.result.is_error': false,
  'errata.result.empty': false,
  'errata.result.item_count': 1,
  'errata.result.text_mirror': true,
};
const spanWith = (extra) => (i) => {
  const { name } = calls[i % POOL];
  const attributes = { 'mcp.method.name': 'tools/call', 'gen_ai.operation.name': 'execute_tool' };
  attributes['gen_ai.tool.name'] = name;
  if (extra) for (const key in ERRATA_ATTRIBUTES) attributes[key] = ERRATA_ATTRIBUTES[key];
  const started = tracer.startSpan(`tools/call ${name}`, { kind: api.SpanKind.CLIENT, attributes });
  if (extra) started.setAttributes(RESULT_ATTRIBUTES);
  started.end();
};

const lookups = pool((i) => lookupResult(`#${10000 + i}`));

/** name → one operation on item i of its pool. */
const PIECES = {
  'result analysis, lookup': analyse(lookups),
  'result analysis, search page': analyse(
    pool((i) => searchResult({ customerId: `cus_${40000 + (i % 977)}`, status: 'paid', limit: 3 })),
  ),
  'result analysis, transient error': analyse(pool((i) => lookupResult(`#9${String(i).padStart(4, '0')}`))),
  'result analysis, bench mix': analyse(calls.map(resultOf)),
  "a lookup's structured content as JSON (part of its analysis)": (i) =>
    JSON.stringify(lookups[i % POOL].structuredContent),
  'arguments hash (SHA-256 of canonical JSON)': (i) => argsFingerprint(calls[i % POOL].arguments),
  'trace context into params._meta': (i) => tracedParams(calls[i % POOL], span, spanContext),
  "server's parse of the request, untraced": (i) =>
    CallToolRequestSchema.parse({ method: 'tools/call', params: calls[i % POOL] }),
  "server's parse of the request, traced": (i) =>
    CallToolRequestSchema.parse({ method: 'tools/call', params: tracedCalls[i % POOL] }),
  'span, 3 attributes (start, end)': spanWith(false),
  'span, 13 attributes (start, set, end)': spanWith(true),
};

/** CPU µs per operation over CALLS operations, after a warm-up of a quarter as many. */
function run(operation) {
  for (let i = 0; i < CALLS / 4; i++) operation(i);
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) operation(i);
  const { user, system } = process.cpuUsage(before);
  return (user + system) / CALLS;
}

console.log(
  `SDK per-call pieces alone: ${fmt(CALLS)} operations per run, ${RUNS} runs per piece, interleaved`,
);
const perPiece = Object.fromEntries(Object.keys(PIECES).map((name) => [name, []]));
for (let round = 0; round < RUNS; round++) {
  for (const [name, operation] of Object.entries(PIECES)) perPiece[name].push(run(operation));
}
const width = Math.max(...Object.keys(PIECES).map((name) => name.length));
for (const [name, runs] of Object.entries(perPiece)) {
  const sorted = [...runs].sort((a, b) => a - b);
  console.log(
    `${name.padEnd(width)}  ${fmt(median(runs), 2)} µs (${fmt(sorted[0], 2)}–${fmt(sorted.at(-1), 2)})`,
  );
}
