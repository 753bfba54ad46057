// Run with: npx vitest bench --run libs/otlp
// One export batch as the SDK's BatchSpanProcessor sends it by default: 512 spans, each with about
// 25 attributes (~1 KB), serialized by the real OTLP serializers.
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { bench, describe } from 'vitest';
import { decodeTraceRequest } from './index';
import { makeRealSpans, withAttributes } from './real-spans.fixture';

const BATCH = 512;

function batch() {
  const { child } = makeRealSpans();
  return Array.from({ length: BATCH }, (_, i) => {
    const attributes: Record<string, unknown> = {
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': `tool_${i % 17}`,
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.call.id': `call_${i.toString(36).padStart(12, '0')}`,
      'gen_ai.tool.call.arguments': JSON.stringify({ city: 'Lyon', units: 'metric', days: i % 7 }),
      'gen_ai.tool.call.result': JSON.stringify({ ok: i % 9 !== 0, text: 'x'.repeat(200) }),
      'mcp.session.id': 'b4f3c2a1-0000-4000-8000-000000000000',
      'jsonrpc.request.id': i,
      'network.transport': 'tcp',
      'server.address': 'mcp.example.com',
      'server.port': 443,
      'error.type': i % 9 === 0 ? 'tool_error' : '',
      'gen_ai.agent.name': 'planner',
      'retry.attempt': i % 3,
      'latency.ratio': i / 512,
      cached: i % 2 === 0,
      tags: ['alpha', 'beta', 'gamma'],
    };
    for (let extra = 0; extra < 8; extra++) attributes[`custom.attribute.${extra}`] = `value-${extra}-${i}`;
    return withAttributes(child, attributes);
  });
}

const spans = batch();
const protobuf = ProtobufTraceSerializer.serializeRequest(spans) ?? new Uint8Array();
const json = JsonTraceSerializer.serializeRequest(spans) ?? new Uint8Array();

describe(`decode ${BATCH} spans (protobuf ${protobuf.length} B, JSON ${json.length} B)`, () => {
  bench('protobuf', () => {
    decodeTraceRequest(protobuf, 'protobuf');
  });
  bench('json', () => {
    decodeTraceRequest(json, 'json');
  });
});
