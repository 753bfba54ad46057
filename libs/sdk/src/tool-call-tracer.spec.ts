import { diag, trace } from '@opentelemetry/api';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { ToolCallTracer } from './tool-call-tracer';
import { captureDiag, registerTestTracing, type TestTracing } from './tracing.spec-helper';

let tracing: TestTracing;
beforeAll(() => {
  tracing = registerTestTracing();
});
afterEach(() => {
  tracing.reset();
  diag.disable();
});

it('when reading a result throws, the error goes to diag, the span still ends and the host gets its result', async () => {
  const { errors } = captureDiag();
  const hostile = {
    get content(): unknown {
      throw new Error('a getter that throws');
    },
  };
  const client = { callTool: async () => hostile };
  const callTool = new ToolCallTracer(
    () => trace.getTracer('test'),
    () => ({}),
  ).wrapCallTool(client.callTool);
  expect(await callTool.call(client, { name: 'lookup', arguments: {} })).toBe(hostile);
  const [span] = tracing.spans();
  expect(span?.name).toBe('tools/call lookup');
  expect(span?.ended).toBe(true);
  expect(errors).toHaveLength(1);
});
